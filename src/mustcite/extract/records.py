"""Records of the extraction stage and the per-paper reference file.

The file ``<paper>.json`` follows MasterSet's schema (MasterSet paper, Appendix C): a JSON list of
``{target, title, year, cite, contexts: [{section, context}]}``, plus optional fields of ours
(``raw``, ``authors``, ``mentions``, ``paper_id``, ``link_score``, the LaTeX path's ``bibkey``,
``doi``, ``arxiv``, ``url``, ``venue``, and label fields added by the labels stage). Its JSON Schema is
``mustcite/schemas/references.schema.json``; :func:`validate_reference_file` checks a file against it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import fastjsonschema

from .. import lazy_libs
from ..errors import MustciteError


@dataclass
class Context:
    section: str
    context: str


@dataclass
class Reference:
    target: int                      # 1-based position in the cleaned reference list
    title: str
    year: int | None                 # None only in a draft's list (a .bib entry without a year)
    cite: str                        # the cite key as written in the text: "4", "DKS17", "Vaswani et al., 2017"
    contexts: list[Context] = field(default_factory=list)
    raw: str = ""
    authors: list[str] = field(default_factory=list)
    mentions: int = 0
    paper_id: str | None = None
    link_score: float | None = None
    # LaTeX/BibTeX drafts only (written only when set, so other files are unchanged)
    bibkey: str | None = None        # the BibTeX key (\cite{key})
    doi: str | None = None
    arxiv: str | None = None         # arXiv id without version: "1706.03762"
    url: str | None = None
    venue: str | None = None

    def to_dict(self) -> dict[str, Any]:
        # a shallow build: dataclasses.asdict deep-copies and was a hot spot of extraction
        d: dict[str, Any] = {
            "target": self.target, "title": self.title, "year": self.year, "cite": self.cite,
            "contexts": [{"section": c.section, "context": c.context} for c in self.contexts],
            "raw": self.raw, "authors": list(self.authors), "mentions": self.mentions,
        }
        if self.paper_id is not None:
            d["paper_id"] = self.paper_id
        if self.link_score is not None:
            d["link_score"] = self.link_score
        for k in ("bibkey", "doi", "arxiv", "url", "venue"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Reference:
        known = set(cls.__dataclass_fields__)
        kw = {k: v for k, v in d.items() if k in known}
        kw["contexts"] = [Context(**c) for c in d.get("contexts", [])]
        return cls(**kw)


@lru_cache(maxsize=1)
def reference_schema() -> dict[str, Any]:
    return json.loads(resources.files("mustcite.schemas").joinpath("references.schema.json").read_text())


@lru_cache(maxsize=1)
def _compiled_schema():
    """The schema compiled by fastjsonschema: ~40x faster than jsonschema on valid files."""
    schema = dict(reference_schema())
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"  # the same keywords, a draft it compiles
    return fastjsonschema.compile(schema)


def validate_reference_list(obj: Any, *, path: str | Path = "<memory>") -> None:
    """Raise MustciteError naming the first offending field if ``obj`` breaks the schema.

    Valid input takes the compiled fast path; jsonschema runs only to name what is wrong.
    """
    try:
        _compiled_schema()(obj)
        return
    except fastjsonschema.JsonSchemaException:
        pass

    validator = lazy_libs.jsonschema().Draft202012Validator(reference_schema())
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = "/".join(str(p) for p in err.absolute_path) or "(top level)"
        raise MustciteError(f"does not follow the reference-file schema: {err.message}",
                            path=path, field=where)


def validate_reference_file(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise MustciteError(f"malformed JSON: {exc.msg}", path=path, line=exc.lineno) from None
    except UnicodeDecodeError:
        raise MustciteError("not UTF-8 text", path=path) from None
    validate_reference_list(obj, path=path)
    return obj
