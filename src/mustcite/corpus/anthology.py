"""Read ML Anthology records (``anthology/records/*.jsonl.gz``) into :class:`ImportedRecord` rows.

ML Anthology (see the folder's PROVENANCE.md) holds every year of NeurIPS, ICML, ICLR, CVPR, ICCV,
ECCV, COLT, UAI, AISTATS and JMLR, their workshops, and venues outside the 15 (TMLR, WACV, CoRL,
ALT, ECML-PKDD, MLJ, JAIR, Neural Computation, ...). Each record names its venue by a lower-case
slug and carries a ``track`` (``main`` / ``workshop`` / ``journal`` / ``datasets-benchmarks`` /
``other``).

What a record becomes:

* a **corpus** record (``main_track`` true) when its venue is one of the 15 (``jmlr`` and its
  ``mloss`` track are JMLR) and its track is the main conference (or the JMLR journal);
* a **side** record otherwise, kept with its venue name and track: a workshop of one of the 15
  (``cvprw`` -> venue "CVPR", track "workshop", grouped apart from the main conference so that a
  workshop paper never takes a main paper's place), NeurIPS Datasets & Benchmarks, and every venue
  outside the 15 (track "main" for a conference such as WACV, "journal" for TMLR).

Two repairs of known defects, both counted by the build: a record of a main-conference file that
shares its DOI with a workshop record of the same venue is a workshop paper filed twice (ECCV
2010-2016, CVPR 2004-2005), and is read as the workshop paper; an abstract under
:data:`MIN_ABSTRACT_CHARS` characters is an upstream placeholder and is dropped. Author names lose
footnote marks (``Ravi[2]``, ``Stang1``) and stray TeX (``D\\textsc\\char13Acunto``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from ..errors import MustciteError
from ..io import iter_jsonl
from .identifiers import identifier_keys
from .importers import ImportedRecord, openreview_id

#: the source name of anthology records (``Paper.source``, ``source_ids`` prefixes)
SOURCE = "mlanthology"
#: folder of the record files inside the data dir
RECORDS_DIR = Path("anthology") / "records"
#: ranks between the official proceedings lists (ACL Anthology, JMLR: 10) and OpenReview dumps (20)
PRIORITY = 15
#: shorter abstracts are upstream placeholders ("./abstract")
MIN_ABSTRACT_CHARS = 40

#: slug -> (venue, track override or None). The 15 corpus venues use their codes.
VENUE_OF_SLUG: dict[str, tuple[str, str | None]] = {
    "neurips": ("NeurIPS", None), "icml": ("ICML", None), "iclr": ("ICLR", None), "cvpr": ("CVPR", None),
    "iccv": ("ICCV", None), "eccv": ("ECCV", None), "colt": ("COLT", None), "uai": ("UAI", None),
    "aistats": ("AISTATS", None), "jmlr": ("JMLR", "main"), "mloss": ("JMLR", "main"),
    "cvprw": ("CVPR", None), "iccvw": ("ICCV", None), "eccvw": ("ECCV", None), "iclrw": ("ICLR", None),
    "icmlw": ("ICML", None), "wacvw": ("WACV", None),
    "wacv": ("WACV", None), "tmlr": ("TMLR", None), "ecmlpkdd": ("ECML-PKDD", None), "ecml": ("ECML", None),
    "mlj": ("MLJ", None), "jair": ("JAIR", None), "corl": ("CoRL", None), "neco": ("Neural Computation", None),
    "alt": ("ALT", None), "acml": ("ACML", None), "l4dc": ("L4DC", None), "mlhc": ("MLHC", None),
    "pgm": ("PGM", None), "midl": ("MIDL", None), "clear": ("CLeaR", None), "collas": ("CoLLAs", None),
    "isipta": ("ISIPTA", None), "log": ("LoG", None), "chil": ("CHIL", None), "automl": ("AutoML", None),
    "cpal": ("CPAL", None), "ftml": ("FTML", None), "distill": ("Distill", None), "dmlr": ("DMLR", None),
    "misc": ("other", None),
}

#: the 15 venues' codes held by the anthology (AAAI, IJCAI and the ACL family are not in it)
CORPUS_VENUES = frozenset({"NeurIPS", "ICML", "ICLR", "CVPR", "ICCV", "ECCV", "COLT", "UAI", "AISTATS", "JMLR"})

_FOOTNOTE = re.compile(r"(?:\[\d+\]|(?<=[a-z])\d+)$")
_TEX = re.compile(r"\\[a-zA-Z]+(?:\d+)?|[{}`]")


def clean_author(name: str) -> str:
    """One author name without footnote marks or TeX residue; '' when nothing is left."""
    name = _TEX.sub("", name)
    name = _FOOTNOTE.sub("", name.strip())
    return " ".join(name.split())


def list_anthology_files(data_dir: Path) -> list[Path]:
    """Every anthology record file under ``<data_dir>/anthology/records``, sorted ([] if none)."""
    folder = Path(data_dir) / RECORDS_DIR
    return sorted(p for p in folder.glob("*.jsonl*") if p.is_file()) if folder.is_dir() else []


def _str(obj: dict, key: str, where: dict) -> str:
    v = obj.get(key)
    if v is None:
        return ""
    if isinstance(v, (int, float)) and not isinstance(v, bool) and key in ("volume", "pages"):
        return str(v)
    if not isinstance(v, str):
        raise MustciteError(f"expected a string, got {type(v).__name__}", field=key, **where)
    return " ".join(v.split())


def import_anthology_file(path: Path, data_dir: Path) -> Iterator[ImportedRecord]:
    """One :class:`ImportedRecord` per line of an anthology record file (bad lines raise
    :class:`MustciteError` naming file, line and field)."""
    path = Path(path)
    try:
        rel = str(path.relative_to(data_dir))
    except ValueError:
        rel = str(path)
    for line, obj in iter_jsonl(path):
        where = dict(path=rel, line=line)
        title = _str(obj, "title", where)
        if not title:
            raise MustciteError("record has no title", field="title", **where)
        slug = _str(obj, "venue", where).lower()
        year = obj.get("year")
        if year is not None and (isinstance(year, bool) or not isinstance(year, int)):
            raise MustciteError(f"year must be an integer, got {year!r}", field="year", **where)
        authors = obj.get("authors") or []
        if not isinstance(authors, list) or not all(isinstance(a, str) for a in authors):
            raise MustciteError("authors must be a list of strings", field="authors", **where)
        track = _str(obj, "track", where) or "main"
        venue, forced = VENUE_OF_SLUG.get(slug, (slug.upper() or "", None))
        track = forced or track
        url, doi = _str(obj, "url", where), "".join(_str(obj, "doi", where).split())
        abstract = _str(obj, "abstract", where)
        if len(abstract) < MIN_ABSTRACT_CHARS:
            abstract = ""
        skip = "" if year is not None else "no year in the record"
        if not slug:
            skip = "no venue in the record"
        main = venue in CORPUS_VENUES and track == "main"
        yield ImportedRecord(
            source=SOURCE, file=rel, line=line, venue=venue, year=year, title=title, abstract=abstract,
            authors=[a for a in (clean_author(x) for x in authors) if a],
            source_id=_str(obj, "id", where), url=url, track=track, main_track=main,
            openreview_id=openreview_id(url), priority=PRIORITY, skip=skip, doi=doi,
            pages=_str(obj, "pages", where), volume=_str(obj, "volume", where),
            id_keys=identifier_keys(doi=doi, url=url),
            group=f"{venue} workshops" if track == "workshop" else venue)
