"""The check report as JSON Lines, a plain-text table or Markdown, and the BibTeX entry of a record
(the published version an ``outdated`` entry should cite instead)."""

from __future__ import annotations

import json
import re
from collections import Counter

from .results import STATUSES, RefCheck

FORMATS = ("table", "json", "markdown")

#: the full names of the venues a record may carry, as a BibTeX entry writes them
VENUE_NAMES = {
    "NeurIPS": "Advances in Neural Information Processing Systems",
    "ICML": "International Conference on Machine Learning",
    "ICLR": "International Conference on Learning Representations",
    "AISTATS": "International Conference on Artificial Intelligence and Statistics",
    "UAI": "Conference on Uncertainty in Artificial Intelligence", "COLT": "Conference on Learning Theory",
    "IJCAI": "International Joint Conference on Artificial Intelligence",
    "AAAI": "AAAI Conference on Artificial Intelligence",
    "CVPR": "IEEE/CVF Conference on Computer Vision and Pattern Recognition",
    "ICCV": "IEEE/CVF International Conference on Computer Vision", "ECCV": "European Conference on Computer Vision",
    "EMNLP": "Conference on Empirical Methods in Natural Language Processing",
    "NAACL": "Conference of the North American Chapter of the Association for Computational Linguistics",
    "ACL": "Annual Meeting of the Association for Computational Linguistics",
    "JMLR": "Journal of Machine Learning Research", "TMLR": "Transactions on Machine Learning Research",
    "JAIR": "Journal of Artificial Intelligence Research", "MLJ": "Machine Learning",
    "DMLR": "Journal of Data-centric Machine Learning Research", "WACV": "IEEE/CVF Winter Conference on "
    "Applications of Computer Vision", "CoRL": "Conference on Robot Learning",
}
#: record venues that are journals (an ``@article``)
JOURNALS = frozenset({"JMLR", "TMLR", "JAIR", "MLJ", "DMLR", "Neural Computation", "FTML", "Distill"})


def _esc(text: str) -> str:
    """A field value without braces (a record's text is plain; a stray brace would break the entry)."""
    return str(text).replace("{", "").replace("}", "")


def record_bibtex(record: dict, key: str) -> str:
    """A BibTeX entry, under ``key``, of a record as :meth:`~.index.Record.to_json` gives it: title,
    authors, venue (a journal as ``@article``; a side track named, "Findings of EMNLP"), year, URL."""
    venue, track = record.get("venue") or "", record.get("track") or ""
    name = VENUE_NAMES.get(venue, venue)
    journal = venue in JOURNALS or track == "journal"
    if name and track and not journal and not re.fullmatch(r"main|oral|poster|spotlight|long|short", track):
        name = (f"Findings of the Association for Computational Linguistics: {venue} {record.get('year') or ''}".strip()
                if "findings" in track else f"{name} ({track})")
    fields = [("title", "{" + _esc(record.get("title", "")) + "}")]
    if record.get("authors"):
        fields.append(("author", _esc(" and ".join(record["authors"]))))
    if name:
        fields.append(("journal" if journal else "booktitle", _esc(name)))
    if record.get("year"):
        fields.append(("year", str(record["year"])))
    if record.get("url"):
        fields.append(("url", record["url"]))
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
    return f"@{'article' if journal else 'inproceedings'}{{{key},\n{body}\n}}\n"


def summary(checks: list[RefCheck]) -> str:
    n = Counter(c.status for c in checks)
    return f"{len(checks)} entries: " + ", ".join(f"{n.get(s, 0)} {s}" for s in STATUSES)


def _detail(c: RefCheck) -> str:
    if c.issues:
        return "; ".join(f"{i.field}: {i.why}" for i in c.issues)
    return c.why


def render_json(checks: list[RefCheck]) -> str:
    return "".join(json.dumps(c.to_json(), ensure_ascii=False) + "\n" for c in checks)


def render_table(checks: list[RefCheck], width: int = 110) -> str:
    kw = min(30, max([3] + [len(c.key) for c in checks]))
    lines = [f"{'key':<{kw}}  {'status':<12}  details", f"{'-' * kw}  {'-' * 12}  {'-' * 40}"]
    for c in checks:
        detail = _detail(c)
        if len(detail) > width:
            detail = detail[: width - 3] + "..."
        key = c.key if len(c.key) <= kw else c.key[: kw - 1] + "~"
        lines.append(f"{key:<{kw}}  {c.status:<12}  {detail}")
    lines.append("")
    lines.append(summary(checks))
    return "\n".join(lines) + "\n"


#: characters that are Markdown or HTML syntax, escaped with a backslash in the Markdown report
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>!|#~&])")
#: the start of a bare URL or www address (GitHub links them without any brackets)
_MD_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<=\bwww)(\.)")


def _md(text: str) -> str:
    """``text`` as literal Markdown table-cell text: every Markdown/HTML special character
    backslash-escaped (no image, link, HTML tag, autolink or emphasis survives), line breaks as
    spaces."""
    text = re.sub(r"[\r\n\t\v\f\u2028\u2029]+", " ", str(text))
    return _MD_AUTOLINK.sub(r"\\\1\2", _MD_SPECIAL.sub(r"\\\1", text))


def _md_key(key: str) -> str:
    """An entry key as an inline code span (readable as written), or escaped text when it holds a
    backtick, a pipe, a backslash or a line break (which a code span in a table cannot hold)."""
    key = str(key)
    if key and not re.search(r"[`|\\\r\n\t\v\f\u2028\u2029]", key):
        return f"`{key}`"
    return _md(key)


def render_markdown(checks: list[RefCheck]) -> str:
    """The table, the summary, then the published version of each outdated entry as BibTeX. Every
    value from an entry or a record is escaped (:func:`_md`): nothing in a .bib file becomes an
    image, a link or HTML in the page a CI job shows."""
    out = ["| key | status | details | record |", "|---|---|---|---|"]
    for c in checks:
        rec = ""
        if c.record:
            rec = f"{c.record.get('title', '')} ({c.record.get('venue', '')} {c.record.get('year', '')})"
        out.append(f"| {_md_key(c.key)} | **{c.status}** | {_md(_detail(c))} | {_md(rec)} |")
    out.append("")
    out.append(summary(checks))
    newer = [c for c in checks if c.bibtex]
    if newer:
        body = "".join(c.bibtex for c in newer)
        # a fence longer than any backtick run of the entries: no value can close the block
        fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", body)), default=0) + 1)
        out += ["", "Published versions of the outdated entries, to cite instead:", "", f"{fence}bibtex"]
        out += [c.bibtex for c in newer]
        out.append(fence)
    return "\n".join(out) + "\n"


def render(checks: list[RefCheck], fmt: str) -> str:
    return {"json": render_json, "table": render_table, "markdown": render_markdown}[fmt](checks)
