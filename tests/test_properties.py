"""Property-based tests (hypothesis) of the reference and citation parsers, the Markdown extraction
entry point, the TREC run/qrels files and the SCIDOCA readers.

Two kinds of property: robustness (arbitrary text or bytes never raise anything but
MustciteError, and errors name file and line) and recovery (a bibliography or citing sentence
built from generated authors, years, titles and numbers is parsed back to what was generated).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import string
import unicodedata
from collections import Counter
from pathlib import Path
from tempfile import TemporaryDirectory

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mustcite.benchmark.trec import format_run, read_qrels, read_run, write_qrels, write_run
from mustcite.errors import MustciteError
from mustcite.extract.citations import RefIndex, _mask_math, count_style_markers, find_citations
from mustcite.extract.markdown import extract_markdown
from mustcite.extract.mathspans import math_spans
from mustcite.extract.model import STATUSES
from mustcite.extract.records import validate_reference_list
from mustcite.extract.references import (
    fold,
    normalize_tag,
    ocr_digits,
    parse_entries,
    parse_reference_string,
    split_authors,
    split_entries,
    split_label,
    surname,
)
from mustcite.extract.sentences import split_sentences
from mustcite.scidoca.formats import (
    Answer,
    Candidate,
    Example,
    read_answers,
    read_examples,
    read_official,
    read_official_dir,
    write_examples,
    write_official,
)

#: MUSTCITE_HYPOTHESIS_SCALE=20 runs 20x the examples (a longer fuzzing session); default 1 (~15 s)
SCALE = max(1, int(os.environ.get("MUSTCITE_HYPOTHESIS_SCALE", "1") or 1))
_COMMON = dict(deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FAST = settings(max_examples=100 * SCALE, **_COMMON)
MEDIUM = settings(max_examples=50 * SCALE, **_COMMON)
SLOW = settings(max_examples=40 * SCALE, **_COMMON)

# --------------------------------------------------------------------------- text strategies

#: Characters that stress parsers: line and paragraph separators str.splitlines/str.split know
#: (U+2028, U+2029, U+0085, \x1c-\x1f, \v, \f), CR, NUL, the replacement char, and the
#: punctuation citations and references are made of.
SPECIAL = "\u2028\u2029\u0085\x1c\x1d\x1e\x1f\x0b\x0c\r\t\x00\ufffd\u2013\u2014 \n"
CITE_CHARS = "[]()\\{}^+-,;.:&'*#_$|lIO0123456789 "
cite_text = st.text(alphabet=st.sampled_from(SPECIAL + CITE_CHARS + "Smith etal and Lee 2019a b"), max_size=200)
any_text = st.one_of(st.text(max_size=300), cite_text,
                     st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
long_token = st.integers(1000, 20000).map(lambda n: "x" * n)

SURNAME = st.from_regex(r"[A-Z][a-z]{2,9}", fullmatch=True)
INITIAL = st.sampled_from(string.ascii_uppercase)
YEAR = st.integers(1950, 2024)
# plain lower-case words, none a cue word of a value list ("values", "range", "layers", ...)
WORD = st.sampled_from("learning model network data graph sparse robust neural training deep "
                       "attention kernel bound prior method results transformer image text".split())
TITLE = st.lists(WORD, min_size=1, max_size=8).map(lambda ws: " ".join(ws).capitalize())
VENUE = st.sampled_from(["In Proceedings of NeurIPS", "Journal of Machine Learning Research",
                         "In International Conference on Learning Representations", "Nature"])


def _ok_or_mustcite(fn, *args, **kwargs):
    """Call ``fn``; a MustciteError is returned (for inspection), any other exception fails."""
    try:
        return fn(*args, **kwargs)
    except MustciteError as exc:
        return exc


# =========================================================================== references

@FAST
@given(any_text)
@example("* [l0] A. Smith. Title. 2020.")
@example("[" + "9" * 5000 + "] x")
@example("\u2028* (12)\x00 Smith, J. (1999). T.")
@example("Smith, J. (20\u0662\u0660). Title.")
def test_reference_string_parse_never_raises(raw):
    label, rest = split_label(raw)
    assert set(label) <= {"number", "tag", "key_names", "key_year", "ocr_repaired_label"}
    if "number" in label:
        assert 0 <= label["number"] <= 9999           # at most four label digits
    authors, title, year = parse_reference_string(raw)
    assert isinstance(authors, list) and all(isinstance(a, str) and a for a in authors)
    assert isinstance(title, str)
    if year is not None:
        # \d also matches other scripts' digits ("20\u0662\u0660" -> 2020): compare digit values
        digits = "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in raw)
        assert 1800 <= year <= 2099 and str(year) in digits


@FAST
@given(st.lists(st.one_of(any_text, long_token), max_size=12))
def test_split_and_parse_entries_never_raise(lines):
    raw = split_entries(lines)
    assert all(isinstance(r, str) and r.strip() for r in raw)
    entries = parse_entries(raw)
    assert [e.position for e in entries] == list(range(1, len(raw) + 1))
    for e in entries:
        assert e.number is None or e.number >= 0
        assert e.year is None or 1800 <= e.year <= 2099
    # RefIndex over any parsed list: numbers map back to entries, each entry has one number
    ix = RefIndex(entries)
    assert set(ix.number_of) == set(range(len(entries)))
    for n, i in ix.by_number.items():
        assert ix.number_of[i] == n
    assert all(0 <= i < len(entries) for i in ix.superseded)


@FAST
@given(any_text)
def test_normalisers_idempotent(s):
    t = normalize_tag(s)
    assert re.fullmatch(r"[A-Za-z0-9+]*", t) and normalize_tag(t) == t
    f = fold(s)
    assert re.fullmatch(r"[a-z]*", f) and fold(f) == f
    d = ocr_digits(s)
    assert d is None or (d.isdigit() and ocr_digits(d) == d)
    assert all(a.strip(" ,.") == a for a in split_authors(s))
    surname(s)


def _author_list(written: list[str]) -> str:
    """``A``, ``A and B``, or ``A, B, and C``, as bibliographies write author lists."""
    if len(written) <= 2:
        return " and ".join(written)
    return ", ".join(written[:-1]) + ", and " + written[-1]


@st.composite
def numeric_bibliography(draw):
    """``* [n] J. Smith, K. Lee, and H. Kim. Title. Venue, 2020.`` lines with the values used."""
    n = draw(st.integers(1, 12))
    start = draw(st.integers(1, 3))
    bracket = draw(st.sampled_from(["[{}]", "({})"]))
    rows, lines = [], []
    for k in range(start, start + n):
        names = draw(st.lists(st.tuples(INITIAL, SURNAME), min_size=1, max_size=4))
        written = [f"{i}. {s}" for i, s in names]
        authors = _author_list(written)
        title, year, venue = draw(TITLE), draw(YEAR), draw(VENUE)
        lines.append(f"* {bracket.format(k)} {authors}. {title}. {venue}, {year}.")
        rows.append((k, [s for _, s in names], title, year))
    return lines, rows


@FAST
@given(numeric_bibliography())
def test_numeric_bibliography_recovered(bib):
    lines, rows = bib
    entries = parse_entries(split_entries(lines))
    assert len(entries) == len(rows)
    for e, (k, surnames, title, year) in zip(entries, rows):
        assert e.number == k and e.year == year and e.title == title
        assert [surname(a) for a in e.authors] == surnames
    ix = RefIndex(entries)
    assert not ix.numbers_by_position and not ix.superseded
    assert {n: i for n, i in ix.by_number.items()} == {k: i for i, (k, *_) in enumerate(rows)}


@st.composite
def author_year_bibliography(draw):
    """APA-like ``Smith, J., Lee, K., and Kim, H. (2020). Title. Venue.`` entries with distinct
    first authors; returns (lines, [(surnames, year)])."""
    firsts = draw(st.lists(SURNAME, min_size=1, max_size=8, unique=True))
    rows, lines = [], []
    for first in firsts:
        others = draw(st.lists(SURNAME.filter(lambda s: s not in firsts), max_size=3))
        names = [first] + others
        written = [f"{s}, {draw(INITIAL)}." for s in names]
        authors = _author_list(written)
        year = draw(YEAR)
        lines.append(f"* {authors} ({year}). {draw(TITLE)}. {draw(VENUE)}.")
        rows.append((names, year))
    return lines, rows


@FAST
@given(author_year_bibliography())
def test_author_year_bibliography_recovered(bib):
    lines, rows = bib
    entries = parse_entries(split_entries(lines))
    assert len(entries) == len(rows)
    for e, (names, year) in zip(entries, rows):
        assert e.year == year and [surname(a) for a in e.authors] == names


# =========================================================================== citations

def _numeric_index(n: int) -> RefIndex:
    return RefIndex(parse_entries([f"* [{k}] A. Author. Title {k}. Venue, 2020." for k in range(1, n + 1)]))


INDEXES = st.one_of(st.integers(0, 80).map(_numeric_index),
                    st.lists(any_text, max_size=6).map(lambda ls: RefIndex(parse_entries(split_entries(ls)))))


@FAST
@given(st.one_of(any_text, st.tuples(any_text, long_token, any_text).map("".join)), INDEXES,
       st.sampled_from(["numeric", "author-year", "alpha"]))
@example("see [1-100000000] and [1-9999]", _numeric_index(5), "numeric")
@example("[l0, 1O, I]\u2028[3\u20135]", _numeric_index(12), "numeric")
@example("\\( [3] \\) and \\( unclosed [4]", _numeric_index(5), "numeric")
@example("(Smith et al., 2019a, b; Lee and Kim, 2018)", RefIndex([]), "author-year")
def test_find_citations_spans_and_bounds(text, index, style):
    ms = find_citations(text, style, index)
    for m in ms:
        assert 0 <= m.start < m.end <= len(text)
        assert m.entry is None or 0 <= m.entry < len(index.entries)
        span = text[m.start:m.end]
        if style in ("numeric", "alpha"):
            assert span[0] == "[" and span[-1] == "]"
        else:
            assert span[-1] in ")]" and m.key.rsplit(", ", 1)[1][:4].isdigit()
        if style == "numeric":
            assert m.key.isdigit()
            # an unrepaired key is written in the span (ranges: its ends are; inner numbers lie between)
            nums = [int(x) for x in re.findall(r"\d+", span)]
            if not m.repaired and nums:
                assert min(nums) <= int(m.key) <= max(nums)
    assert [m.start for m in ms] == sorted(m.start for m in ms)
    if style == "numeric":
        # ranges expand to at most 61 keys, so a bracket cannot blow up
        for start, group in Counter(m.start for m in ms).items():
            body = text[start:text.index("]", start)]
            assert group <= 61 * (body.count(",") + body.count(";") + 1)
    counts = count_style_markers(text)
    assert set(counts) == {"numeric", "author-year", "alpha"} and min(counts.values()) >= 0


#: what the linear math scanners must agree with: the regexes they replace
MATH_REGEX = re.compile(r"\\\(.*?\\\)|\\\[.*?\\\]|\$[^$]+\$", re.S)
MATH_REGEX_NO_DOLLARS = re.compile(r"\\\(.*?\\\)|\\\[.*?\\\]", re.S)


@FAST
@given(st.lists(st.sampled_from(["\\(", "\\)", "\\[", "\\]", "\\", "$", "(", "]", "x", ". ", "\n"]), max_size=30)
       .map("".join))
@example("$$ a $ b $$")
@example("\\\\(a\\) \\[ $x$ \\]")
def test_math_spans_are_the_regex_spans(s):
    assert math_spans(s) == [m.span() for m in MATH_REGEX.finditer(s)]
    assert math_spans(s, dollars=False) == [m.span() for m in MATH_REGEX_NO_DOLLARS.finditer(s)]


@pytest.mark.parametrize("unit", ["\\( a. B ", "\\[ a. B ", "$ a. B ", "\\(\\[$ a. B "])
def test_sentence_splitter_on_unclosed_math(unit):
    """20,000 units of unclosed inline math (each opener used to make the splitter search to the
    end of the text): read once, every character kept, split only at a real boundary. Its time at
    n and 2n is measured by benchmarks/scaling.py (cases splitter/*), not here."""
    n = 20_000
    text = unit * n
    out = split_sentences(text)
    assert " ".join(out) == text.strip()                     # nothing lost or moved; split at white space only
    assert all(s.endswith("a.") for s in out[:-1]) and all(s.startswith("B") for s in out[1:])   # at ". B" only
    if unit.startswith("$"):
        # "$ a. B $" is closed math, its full stop no boundary: the ". B" between two such spans splits
        assert len(out) == n // 2 + 1
    else:
        # no \( or \[ is closed: the unclosed "(" or "[" holds a sentence together for 600 characters,
        # so each sentence ends within two units after that and none is dropped or merged beyond it
        longest = 600 + 2 * len(unit)
        assert max(map(len, out)) <= longest and len(out) >= len(text) // longest


@FAST
@given(st.text(alphabet=st.sampled_from("\\()[]x \n\u2028$"), max_size=80))
@example("\\( x " * 20000 + "\\)")        # was quadratic (the regex rescanned from every opener)
@example("\\(\\)\\[\\]\\\\(a\\)\\")
def test_mask_math_keeps_length_and_text_outside_math(s):
    masked = _mask_math(s)
    assert masked == MATH_REGEX_NO_DOLLARS.sub(lambda m: " " * len(m.group(0)), s)     # the regex it replaces
    assert len(masked) == len(s)
    assert all(a == b or b == " " for a, b in zip(s, masked))
    assert _mask_math(masked) == masked


def test_mask_math_linear_on_unclosed_openers():
    """Regression: 200k unclosed ``\\(`` took minutes with the regex (a rescan from every opener)."""
    s = "\\( x [1] " * 200_000
    assert _mask_math(s) == s
    assert count_style_markers(s)["numeric"] == 200_000


SEP = st.sampled_from([", ", ",", "; ", ";"])
DASH = st.sampled_from(["-", "\u2013", "\u2014", " - "])


@st.composite
def numeric_citing_sentence(draw):
    """A sentence citing entries 1..n with single keys, groups and ranges; returns
    (n, sentence, expected keys in order)."""
    n = draw(st.integers(2, 90))
    text, keys = ["We"], []
    for _ in range(draw(st.integers(1, 4))):
        text.extend(draw(st.lists(WORD, min_size=1, max_size=4)))
        parts, written = [], []
        for _ in range(draw(st.integers(1, 3))):
            a = draw(st.integers(1, n))
            if draw(st.booleans()) and a < n:
                b = draw(st.integers(a + 1, min(n, a + 60)))
                written.append(f"{a}{draw(DASH)}{b}")
                parts.extend(range(a, b + 1))
            else:
                written.append(str(a))
                parts.append(a)
        body = written[0]
        for w in written[1:]:
            body += draw(SEP) + w
        text.append(f"[{body}]")
        keys.extend(parts)
    return n, " ".join(text) + ".", keys


@FAST
@given(numeric_citing_sentence())
def test_numeric_citations_recovered(case):
    n, sentence, keys = case
    ms = find_citations(sentence, "numeric", _numeric_index(n))
    assert [m.key for m in ms] == [str(k) for k in keys]
    assert [m.entry for m in ms] == [k - 1 for k in keys]
    assert not any(m.repaired for m in ms)


@FAST
@given(st.integers(1, 9999) | st.integers(1, 25), st.integers(0, 9999) | st.integers(0, 25), DASH)
@example(1, 9999, "-")
@example(1, 20, "-")
@example(3, 5, "-")
@example(5, 3, "\u2013")
def test_numeric_range_expansion_is_bounded(a, b, dash):
    ms = find_citations(f"as shown [{a}{dash}{b}].", "numeric", _numeric_index(10))
    keys = [int(m.key) for m in ms]
    if 0 in (a, b) or max(a, b) > 1.5 * 10 + 5:
        assert keys == []       # "[0-...]" or far beyond the 10 entries: read as a value range
    elif 0 < b - a <= 60:
        assert keys == list(range(a, b + 1))
    else:
        assert keys == [a, b]                   # reversed or over-long ranges: the two ends only


@st.composite
def author_year_case(draw):
    """Entries with distinct first authors and a sentence citing some of them narratively
    (``Smith et al. (2020)``) and in parenthetical groups (``(Smith, 2020; Lee and Kim, 2019)``)."""
    lines, rows = draw(author_year_bibliography())
    picks = draw(st.lists(st.integers(0, len(rows) - 1), min_size=1, max_size=6))
    text, expected = ["We follow"], []
    i = 0
    while i < len(picks):
        def names_of(k):
            names = rows[k][0]
            return (names[0] if len(names) == 1 else f"{names[0]} and {names[1]}" if len(names) == 2
                    else f"{names[0]} et al.")
        if draw(st.booleans()):
            k = picks[i]
            text.append(f"{names_of(k)} ({rows[k][1]})")
            expected.append(k)
            i += 1
        else:
            group = picks[i:i + draw(st.integers(1, 3))]
            text.append("(" + "; ".join(f"{names_of(k)}, {rows[k][1]}" for k in group) + ")")
            expected.extend(group)
            i += len(group)
        text.extend(draw(st.lists(WORD, min_size=1, max_size=3)))
    return lines, " ".join(text) + ".", expected


@FAST
@given(author_year_case())
def test_author_year_citations_recovered(case):
    lines, sentence, expected = case
    index = RefIndex(parse_entries(split_entries(lines)))
    ms = find_citations(sentence, "author-year", index)
    assert [m.entry for m in ms] == expected
    for m in ms:
        assert sentence[m.start:m.end].endswith(")")


# =========================================================================== extract_markdown

HEADINGS = st.sampled_from(["# A Title Line", "## Abstract", "## 1 Introduction", "## 2 Related Work",
                            "## References", "# Bibliography", "## Appendix", "## Acknowledgments",
                            "### 2.1 Details", "NeurIPS Paper Checklist", "[MISSING_PAGE_FAIL:3]",
                            "[MISSING_PAGE_EMPTY:2]", "Experiments", "3 Method"])
PROSE = st.builds(lambda ws, cite: " ".join(ws).capitalize() + f" {cite}.",
                  st.lists(WORD, min_size=3, max_size=12),
                  st.sampled_from(["[1]", "[2, 3]", "[1-4]", "[l0]", "(Smith et al., 2019)",
                                   "Smith and Lee (2020)", "[DKS17]", "[0, 1]", "\\( x [2] \\)", ""]))
REF_LINE = st.builds(lambda n, t, y, b: f"* {b.format(n)} J. Smith. {t}. Venue, {y}.",
                     st.integers(0, 120), TITLE, st.integers(1800, 2100),
                     st.sampled_from(["[{}]", "({})", "[{}", "{}", "[Smi{}]", "Smith et al. ({})"]))
MD_LINE = st.one_of(HEADINGS, PROSE, REF_LINE, any_text, long_token.map(lambda s: "* " + s))
BODY_LINE = st.one_of(PROSE, PROSE, PROSE, HEADINGS, any_text, cite_text)
BIB_LINE = st.one_of(REF_LINE, REF_LINE, REF_LINE, PROSE, any_text, cite_text, HEADINGS)
#: a paper-shaped document (title, abstract, body, references, tail) with random lines mixed in,
#: joined by a random line separator: reaches reference parsing and citation search
MD_DOC = st.builds(
    lambda title, body, refs, bib, tail, sep: sep.join(["# " + title, "## Abstract", *body, "## References",
                                                         *refs, *bib, *tail]),
    TITLE, st.lists(BODY_LINE, min_size=3, max_size=25), st.lists(REF_LINE, min_size=1, max_size=10),
    st.lists(BIB_LINE, max_size=8),
    st.lists(BODY_LINE, max_size=5), st.sampled_from(["\n", "\n\n", "\r\n", "\n\u2028", "\n\x00"]))


@SLOW
@given(st.one_of(any_text, st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
                 st.lists(MD_LINE, max_size=40).map("\n".join),
                 st.lists(MD_LINE, max_size=40).map("\u2028".join), MD_DOC, MD_DOC))
@example("")
@example("\x00" * 100)
@example("# T\n\n## References\n\n* [1-100000000] A. B. C. 2020.\n")
def test_extract_markdown_never_raises(text):
    paper = extract_markdown(text, source_path="x.mmd")
    assert paper.status in STATUSES and paper.source_path == "x.mmd"
    if paper.status == "failed":
        assert paper.messages
    refs = paper.references
    assert [r.target for r in refs] == list(range(1, len(refs) + 1))
    assert all(r.year is not None for r in refs)
    validate_reference_list(paper.to_reference_list())
    st_ = paper.stats
    # a mention names one entry; entries without a year are dropped with their mentions
    assert sum(r.mentions for r in refs) <= st_["mentions_resolved"] <= st_["mentions_total"]
    for r in refs:
        assert r.mentions >= len(r.contexts)
    if st_["citation_style"] == "numeric":
        assert len({r.cite for r in refs}) == len(refs)      # one reference per number


@st.composite
def markdown_paper(draw):
    """A small Nougat-like paper: title, abstract, an introduction citing [k] keys (single, groups,
    ranges) and a numbered reference list; returns (text, n entries, mentions per number)."""
    lines, rows = draw(numeric_bibliography().filter(lambda b: b[1][0][0] == 1))
    n = len(rows)
    abstract = " ".join(draw(st.lists(WORD, min_size=25, max_size=40))).capitalize() + "."
    body, counts = [], Counter()
    for _ in range(draw(st.integers(1, 6))):
        sents = []
        for _ in range(draw(st.integers(1, 3))):
            words = " ".join(draw(st.lists(WORD, min_size=3, max_size=10))).capitalize()
            if draw(st.booleans()):
                a = draw(st.integers(1, n))
                b = draw(st.integers(a, n))
                cite = f"[{a}]" if a == b else f"[{a}-{b}]" if draw(st.booleans()) else f"[{a}, {b}]"
                keys = [a] if a == b else range(a, b + 1) if "-" in cite else [a, b]
                counts.update(keys)
                words += " " + cite
            sents.append(words + ".")
        body.append(" ".join(sents))
    text = "\n\n".join(["# " + draw(TITLE), "Jane Doe, University of Somewhere", "## Abstract", abstract,
                        "## 1 Introduction", *body, "## References", *lines]) + "\n"
    return text, n, counts


@SLOW
@given(markdown_paper())
def test_markdown_paper_recovered(case):
    text, n, counts = case
    paper = extract_markdown(text, source_path="p.mmd")
    assert paper.status != "failed", paper.messages
    assert paper.stats["citation_style"] == "numeric"
    assert [r.cite for r in paper.references] == [str(k) for k in range(1, n + 1)]
    assert {r.cite: r.mentions for r in paper.references} == {str(k): counts[k] for k in range(1, n + 1)}
    assert paper.stats["mentions_total"] == paper.stats["mentions_resolved"] == sum(counts.values())
    for r in paper.references:
        assert bool(r.contexts) == (r.mentions > 0)


# =========================================================================== TREC files

#: a TREC token: non-empty, no white space of any kind (str.split() splits on all of it)
TOKEN = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12).filter(
    lambda s: not any(c.isspace() for c in s))
SCORE = st.floats(allow_nan=False, allow_infinity=False)
RUN = st.dictionaries(TOKEN, st.lists(st.tuples(TOKEN, SCORE), max_size=6, unique_by=lambda t: t[0]), max_size=5)
QRELS = st.dictionaries(TOKEN, st.dictionaries(TOKEN, st.integers(-3, 10 ** 12), max_size=6), max_size=5)


@MEDIUM
@given(RUN, TOKEN)
def test_run_round_trip(results, tag):
    with TemporaryDirectory() as d:
        path = Path(d) / "run.txt"
        write_run(path, results, tag=tag)
        back = read_run(path)
    expected = {q: {doc: float(f"{s:.6f}") for doc, s in hits} for q, hits in results.items() if hits}
    assert back == expected
    # ranks are 1..n in the given order
    lines = format_run(results, tag).splitlines()
    assert len(lines) == sum(len(h) for h in results.values())


@MEDIUM
@given(QRELS)
def test_qrels_round_trip(qrels):
    with TemporaryDirectory() as d:
        path = Path(d) / "q.txt"
        n = write_qrels(path, qrels)
        back = read_qrels(path)
    assert n == sum(len(v) for v in qrels.values())
    assert back == {q: docs for q, docs in qrels.items() if docs}


@FAST
@given(TOKEN, TOKEN, st.sampled_from(list(" \t\n\r\u2028\u2029\u0085\x1c\x0b\x0c\u00a0\u3000")),
       st.sampled_from(["qid", "docid", "tag"]))
def test_trec_writers_refuse_whitespace_tokens(a, b, ws, where):
    bad = a + ws + b
    args = {"qid": ({bad: [("d", 1.0)]}, "t"), "docid": ({"q": [(bad, 1.0)]}, "t"),
            "tag": ({"q": [("d", 1.0)]}, bad)}[where]
    with pytest.raises(MustciteError):
        format_run(*args)
    if where != "tag":
        q = {bad: {"d": 1}} if where == "qid" else {"q": {bad: 1}}
        with TemporaryDirectory() as d, pytest.raises(MustciteError):
            write_qrels(Path(d) / "q", q)


RUN_LINE = st.builds(lambda q, d, r, s, t: f"{q} Q0 {d} {r} {s} {t}", TOKEN, TOKEN,
                     st.integers(1, 1000), SCORE.map(lambda x: f"{x:.6f}"), TOKEN)
BAD_RUN_LINE = st.one_of(
    st.lists(TOKEN, min_size=1, max_size=9).filter(lambda ts: len(ts) != 6).map(" ".join),
    st.builds(lambda r: f"q Q0 d {r} 1.0 t", TOKEN.filter(lambda r: not _is_int(r))),
    st.builds(lambda s: f"q Q0 d 1 {s} t", st.one_of(TOKEN.filter(lambda s: not _is_float(s)),
                                                      st.sampled_from(["nan", "inf", "-Infinity", "1e999"]))),
    st.just("q Q0 d 1 " + "9" * 5000 + " t"), st.just("q Q0 d " + "9" * 5000 + " 1 t"))
QREL_LINE = st.builds(lambda q, d, r: f"{q} 0 {d} {r}", TOKEN, TOKEN, st.integers(0, 3))
BAD_QREL_LINE = st.one_of(
    st.lists(TOKEN, min_size=1, max_size=7).filter(lambda ts: len(ts) != 4).map(" ".join),
    st.builds(lambda r: f"q 0 d {r}", TOKEN.filter(lambda r: not _is_int(r))),
    st.just("q 0 d " + "9" * 5000))


def _is_int(s: str) -> bool:
    try:
        int(s)
        return True
    except ValueError:
        return False


def _is_float(s: str) -> bool:
    try:
        return math.isfinite(float(s))
    except ValueError:
        return False


@FAST
@given(st.data(), st.sampled_from(["run", "qrels"]), st.sampled_from(["\n", "\r\n", "\r"]),
       st.sampled_from(["f.txt", "f.txt.gz"]))
def test_trec_malformed_line_names_file_and_line(data, kind, eol, name):
    good, bad, reader = ((RUN_LINE, BAD_RUN_LINE, read_run) if kind == "run"
                         else (QREL_LINE, BAD_QREL_LINE, read_qrels))
    # distinct query ids per good line, so no "appears twice" error comes before the bad line
    before = [f"{i}_{line}" for i, line in enumerate(data.draw(st.lists(good, max_size=5)))]
    lines = before + [data.draw(bad)] + data.draw(st.lists(st.one_of(good, bad), max_size=3))
    text = eol.join(lines) + eol
    with TemporaryDirectory() as d:
        path = Path(d) / name
        raw = text.encode("utf-8")
        path.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
        with pytest.raises(MustciteError) as info:
            reader(path)
    assert info.value.path == str(path) and info.value.line == len(before) + 1


@FAST
@given(st.one_of(st.binary(max_size=400), any_text.map(lambda s: s.encode("utf-8", "surrogatepass")),
                 st.lists(st.one_of(RUN_LINE, QREL_LINE, BAD_RUN_LINE, any_text), max_size=6)
                 .map(lambda ls: "\n".join(ls).encode("utf-8", "surrogatepass"))),
       st.sampled_from(["f.txt", "f.txt.gz", "plain.gz"]), st.integers(0, 400))
@example(gzip.compress(b"q Q0 d 1 1.0 t\n" * 40), "f.txt.gz", 50)          # truncated gzip: EOFError
@example(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff\xff\xff\xff", "plain.gz", 400)  # bad deflate: zlib.error
def test_trec_readers_raise_only_mustcite_error(raw, name, cut):
    with TemporaryDirectory() as d:
        path = Path(d) / name
        if name == "f.txt.gz":                       # a gzip file, possibly truncated
            z = gzip.compress(raw)
            raw = z[:max(10, len(z) - cut)] if cut else z
        path.write_bytes(raw)
        for reader in (read_run, read_qrels):
            out = _ok_or_mustcite(reader, path)
            if isinstance(out, MustciteError):
                assert out.path == str(path)
                assert out.line is None or out.line >= 1
            else:
                assert isinstance(out, dict)


def test_trec_writers_ignore_gz_suffix(tmp_path):
    """Documents current behaviour: write_run / write_qrels write plain text whatever the name, while
    the readers gunzip a ``.gz`` name, so a ``.gz`` file written here is refused (cleanly)."""
    path = tmp_path / "r.txt.gz"
    write_run(path, {"q": [("a", 1.0)]})
    assert path.read_bytes().startswith(b"q Q0 a 1")
    with pytest.raises(MustciteError, match="gzip"):
        read_run(path)


def test_trec_nan_score_is_written_but_refused_on_read(tmp_path):
    """Documents current behaviour: format_run writes a NaN score ('nan'), which read_run then
    rejects with a clean error naming the line (the writer does not check finiteness)."""
    path = tmp_path / "r.txt"
    write_run(path, {"q": [("a", 1.0), ("b", float("nan"))]})
    with pytest.raises(MustciteError) as info:
        read_run(path)
    assert info.value.line == 2


# =========================================================================== SCIDOCA files

ID = st.one_of(st.from_regex(r"[A-Za-z0-9_]{1,8}", fullmatch=True), st.text(min_size=1, max_size=8).filter(
    lambda s: s.strip() and s != "[empty]" and "/" not in s and "\\" not in s and not s.startswith(".")))
SENT = st.text(max_size=40)


@st.composite
def scidoca_example(draw, task=None):
    task = task or draw(st.sampled_from([1, 2, 3]))
    cands = draw(st.lists(st.builds(Candidate, ID, st.one_of(st.just(""), SENT), st.one_of(st.just(""), SENT)),
                          min_size=1, max_size=5, unique_by=lambda c: c.id))
    ids = [c.id for c in cands]
    pick = st.sampled_from(ids)
    if task == 1:
        para = draw(SENT).replace("[MASK", "[mask")
        gold = tuple(draw(st.lists(pick, max_size=3)))
    elif task == 2:
        k = draw(st.integers(1, 3))
        para = " ".join(f"{draw(SENT)} [MASK{i}]" for i in range(1, k + 1))
        gold = {f"[MASK{i}]": draw(pick) for i in range(1, k + 1)}
    else:
        para = tuple(draw(st.lists(SENT, min_size=1, max_size=4)))
        gold = tuple(tuple(draw(st.lists(pick, max_size=2))) for _ in para)
    with_gold = draw(st.booleans())
    return Example(draw(ID), task, para, tuple(cands), gold if with_gold else None)


@MEDIUM
@given(st.sampled_from([1, 2, 3]).flatmap(lambda t: st.lists(scidoca_example(t), min_size=1, max_size=4,
                                                             unique_by=lambda e: e.id)))
def test_scidoca_seed_round_trip(examples):
    with TemporaryDirectory() as d:
        path = Path(d) / "ex.jsonl"
        assert write_examples(path, examples) == len(examples)
        back = read_examples(path)
    assert back == examples


@MEDIUM
@given(st.sampled_from([1, 2, 3]).flatmap(lambda t: st.lists(scidoca_example(t), min_size=1, max_size=3,
                                                             unique_by=lambda e: e.id)))
@example([Example("\x00", 1, "", (Candidate("0"),))])       # NUL in an id: was a ValueError from the OS
@example([Example("²", 1, "", (Candidate("0"),)), Example("3", 1, "", (Candidate("0"),))])  # int("²"): ValueError
def test_scidoca_official_round_trip(examples):
    if any("\x00" in e.id for e in examples):
        with TemporaryDirectory() as d, pytest.raises(MustciteError, match="cannot be a file name"):
            for ex in examples:
                write_official(ex, d)
        return
    with TemporaryDirectory() as d:
        for ex in examples:
            write_official(ex, d)
        back = {e.id: e for e in read_official_dir(d)}
    assert back == {e.id: e for e in examples}


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
                    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=3),
                    max_leaves=8)
SEED_FIELDS = ["id", "paragraph", "candidate_references", "predicted_citations", "sentence_citations"]


@FAST
@given(scidoca_example(), st.sampled_from(SEED_FIELDS + ["title", "extra"]), JSON, st.integers(0, 3),
       st.booleans())
def test_scidoca_jsonl_bad_record_names_file_and_line(ex, key, value, n_before, drop):
    """Good records, then one with a field replaced by any JSON value (or removed): reading
    either succeeds or raises MustciteError naming the file and that record's line."""
    from mustcite.scidoca.formats import example_to_json
    good = [example_to_json(Example(f"good{i}", ex.task, ex.paragraph, ex.candidates, ex.gold))
            for i in range(n_before)]
    row = example_to_json(ex)
    if drop:
        row.pop(key, None)
    else:
        row[key] = value
    with TemporaryDirectory() as d:
        path = Path(d) / "x.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in good + [row]), encoding="utf-8")
        out = _ok_or_mustcite(read_examples, path)
    if isinstance(out, MustciteError):
        assert out.path == str(path) and out.line == n_before + 1
    else:
        assert len(out) == n_before + 1


OFFICIAL_KEYS = ["text", "bib_entries", "citation_candidates", "correct_citation"]


@FAST
@given(st.dictionaries(st.sampled_from(OFFICIAL_KEYS + ["_note"]), JSON, max_size=4),
       st.one_of(st.none(), st.dictionaries(st.sampled_from(OFFICIAL_KEYS), JSON, max_size=2),
                 JSON, st.binary(max_size=40)))
def test_scidoca_official_files_raise_only_mustcite_error(obj_in, label):
    with TemporaryDirectory() as d:
        in_path = Path(d) / "7.in"
        in_path.write_text(json.dumps(obj_in), encoding="utf-8")
        label_path = Path(d) / "7.label"
        if isinstance(label, bytes):
            label_path.write_bytes(label)
        elif label is not None:
            label_path.write_text(json.dumps(label), encoding="utf-8")
        for fn, arg in ((read_official, in_path), (read_examples, in_path), (read_examples, Path(d))):
            out = _ok_or_mustcite(fn, arg)
            if isinstance(out, MustciteError):
                assert out.path in (str(in_path), str(label_path), str(d))
            else:
                assert out


@FAST
@given(st.binary(max_size=300), st.sampled_from(["x.jsonl", "x.json", "x.in", "x.label", "x.txt"]))
@example(b'{"text": ' + b"[" * 5000, "x.in")                            # RecursionError in json
@example(b'{"id": ' + b"1" * 5000 + b"}", "x.json")                    # int digits limit: ValueError
@example(b"[" * 5000 + b"\n", "x.txt")                                  # ... also when sniffing the shape
@example(b'{"id": "a", "paragraph": "x", "candidate_references": []}\n\xff\n', "x.jsonl")
def test_scidoca_read_examples_bytes(raw, name):
    with TemporaryDirectory() as d:
        path = Path(d) / name
        path.write_bytes(raw)
        outs = [_ok_or_mustcite(read_examples, path), _ok_or_mustcite(read_answers, path)]
    for out in outs:
        if isinstance(out, MustciteError):
            assert out.path in (str(path), str(path.with_suffix(".in")), str(path.with_suffix(".label")))
            assert out.line is None or out.line >= 1
        else:
            assert all(isinstance(e, (Example, Answer)) for e in out)


@pytest.mark.parametrize("line", ["[" * 5000, '{"id": ' + "1" * 5000 + "}"])
def test_scidoca_jsonl_pathological_json_line(tmp_path, line):
    path = tmp_path / "x.jsonl"
    path.write_text('{"id": "a", "paragraph": "x", "candidate_references": []}\n' + line + "\n")
    with pytest.raises(MustciteError) as info:
        read_examples(path)
    assert info.value.line == 2


def test_scidoca_corrupt_gzip(tmp_path):
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff\xff\xff\xff")
    with pytest.raises(MustciteError):
        read_examples(path)
