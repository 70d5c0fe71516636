"""The retriever interface shared by every retrieval method, and its inputs.

A :class:`Retriever` indexes a candidate pool (``Paper`` objects or dicts with ``paper_id``,
``title``, ``abstract``) and answers queries ``{"id", "title", "abstract"}`` with a ranked list of
``(paper_id, score)`` per query id. Methods live one per module (``bm25``, ``dense``);
:func:`make_retriever` picks one by name or model path.
"""

from __future__ import annotations

import json
import resource
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import DataMissingError, MustciteError, UsageError
from ..io import iter_jsonl

Results = dict[str, list[tuple[str, float]]]


@dataclass(frozen=True)
class Doc:
    """A pool candidate or a query, reduced to what retrieval reads."""

    id: str
    title: str
    abstract: str = ""

    @property
    def text(self) -> str:
        return doc_text(self.title, self.abstract)


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MiB (recorded in run metas and training cards)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def doc_text(title: str, abstract: str) -> str:
    """The one text every method sees: title and abstract joined (title alone if no abstract)."""
    title = (title or "").strip()
    abstract = (abstract or "").strip()
    if not abstract:
        return title
    sep = " " if title.endswith((".", "?", "!", ":")) else ". "
    return f"{title}{sep}{abstract}"


def as_doc(item: Any, *, id_key: str = "paper_id") -> Doc:
    """A ``Paper``, a pool dict (``paper_id``) or a query dict (``id``) as a :class:`Doc`."""
    if isinstance(item, Doc):
        return item
    if not isinstance(item, dict):
        item = item.to_dict() if hasattr(item, "to_dict") else vars(item)
    pid = item.get(id_key) or item.get("id") or item.get("paper_id")
    if not pid:
        raise MustciteError(f"record without '{id_key}'", field=id_key)
    return Doc(str(pid), str(item.get("title") or ""), str(item.get("abstract") or ""))


def as_docs(items, *, id_key: str = "paper_id") -> list[Doc]:
    return [as_doc(x, id_key=id_key) for x in items]


@runtime_checkable
class Retriever(Protocol):
    name: str

    def index(self, pool: list[Any]) -> None: ...

    def search(self, queries: list[Any], k: int = 100) -> Results: ...

    def save(self, path: str | Path) -> None: ...

    def metadata(self) -> dict[str, Any]: ...


def read_queries(path: str | Path) -> list[Doc]:
    """Read a queries JSONL file (``{"id","title","abstract"}`` a line); bad lines name file:line."""
    path = Path(path)
    if not path.exists():
        raise MustciteError("queries file not found", path=path)
    out, seen = [], set()
    for lineno, obj in iter_jsonl(path):
        qid = obj.get("id")
        if not isinstance(qid, (str, int)) or str(qid).strip() == "" or any(c.isspace() for c in str(qid)):
            raise MustciteError("query needs a non-empty 'id' without whitespace", path=path, line=lineno,
                                field="id")
        title, abstract = obj.get("title"), obj.get("abstract", "")
        if not isinstance(title, str) or not title.strip():
            raise MustciteError("query needs a non-empty 'title'", path=path, line=lineno, field="title")
        if abstract is None:
            abstract = ""
        if not isinstance(abstract, str):
            raise MustciteError("'abstract' must be a string", path=path, line=lineno, field="abstract")
        if str(qid) in seen:
            raise MustciteError(f"duplicate query id {qid!r}", path=path, line=lineno, field="id")
        seen.add(str(qid))
        out.append(Doc(str(qid), title, abstract))
    if not out:
        raise MustciteError("no queries in file", path=path)
    return out


#: the columns of a pool paper that retrieval, its output and the recommender read
POOL_COLUMNS = ("paper_id", "title", "abstract", "authors", "venue", "year", "url", "pdf")


def load_pool(path: str | Path, years: tuple[int, int] | None = None) -> list[dict[str, Any]]:
    """Pool papers from a Parquet (corpus or benchmark pool) or JSONL file, as dicts with the
    :data:`POOL_COLUMNS` the file has; ``years=(first, last)`` keeps papers of those years."""
    path = Path(path)
    if not path.is_file():
        raise DataMissingError(f"pool file {path} does not exist",
                               hint="build the corpus (`mustcite corpus build`) or the benchmark "
                                    "(`mustcite benchmark build`), or pass --pool FILE")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            names = pq.read_schema(path).names
            table = pq.read_table(path, columns=[c for c in POOL_COLUMNS if c in names])
        except Exception as exc:  # pyarrow raises several types for corrupt files
            raise MustciteError(f"cannot read Parquet: {exc}", path=path) from None
        if "paper_id" not in table.column_names or "title" not in table.column_names:
            raise MustciteError("pool Parquet needs columns paper_id and title", path=path)
        rows = table.to_pylist()
    else:
        rows = []
        for lineno, obj in iter_jsonl(path):
            if not obj.get("paper_id") or not isinstance(obj.get("title"), str):
                raise MustciteError("pool record needs 'paper_id' and 'title'", path=path, line=lineno)
            rows.append(obj)
    if years:
        rows = [r for r in rows if r.get("year") and years[0] <= r["year"] <= years[1]]
    return rows


def make_retriever(method: str, **options: Any) -> Retriever:
    """``bm25``, ``minilm`` (the shipped MiniLM), ``onnx-int8:minilm`` (its int8 ONNX export),
    ``static:minilm`` (its static model2vec distillation), ``mpnet`` (needs ``model_path``),
    ``onnx:FOLDER`` (a ready-made ONNX encoder, e.g. inCite's MiniLM), a model folder, or a
    Hugging Face folder with its pooling (``hf:``/``hf-cls:``/``hf-mean:FOLDER``, ``BASE+ADAPTER``
    for SPECTER2; see :mod:`mustcite.retrieval.hf_encoder`). ``pooling="cls"|"mean"`` forces the
    pooling of a folder. ``ppr``/``gnn`` (or ``ppr:FOLDER``/``gnn:FOLDER``): the graph methods
    of ``mustcite benchmark train-graph`` (:mod:`mustcite.retrieval.graph`). ``rerank:FOLDER`` (or a
    folder with ``rerank_model.json``): prefetch and rerank with a cross-encoder of ``mustcite
    benchmark train-rerank`` (:mod:`mustcite.retrieval.rerank`); ``prefetch=`` overrides its depth."""
    if method == "bm25":
        from .bm25 import BM25Retriever

        return BM25Retriever(**{k: v for k, v in options.items() if k in ("k1", "b")})
    if method.startswith("colbert"):
        from .colbert import METHOD_MODES, colbert_retriever  # late interaction via PyLate (.colbert)

        if method.partition(":")[0] in METHOD_MODES:
            return colbert_retriever(method, **options)
    if method in ("ppr", "gnn") or method.startswith(("ppr:", "gnn:")) \
            or (Path(method).expanduser() / "graph_model.json").is_file():
        from .graph import graph_retriever   # graph methods: ppr[:FOLDER], gnn[:FOLDER] (train-graph)

        return graph_retriever(method, cache_dir=options.get("cache_dir"))
    if method.startswith("rerank:") or (Path(method).expanduser() / "rerank_model.json").is_file():
        from .rerank import PrefetchRerankRetriever   # prefetch and rerank (HAtten-RR family)

        folder = Path(method.removeprefix("rerank:")).expanduser()
        return PrefetchRerankRetriever.load(folder, prefetch=options.get("prefetch"))
    from .dense import DenseRetriever, is_onnx_folder_spec, onnx_folder_file

    dense_opts = {k: v for k, v in options.items()
                  if k in ("batch_size", "max_seq_length", "device", "ann", "cache_dir", "model_path")}
    pooling = options.get("pooling") or None
    if pooling not in (None, "cls", "mean"):
        raise UsageError(f"unknown pooling {pooling!r}", hint="use cls or mean")
    if method == "minilm" and not pooling:
        return DenseRetriever(**dense_opts)
    if method == "minilm":
        from .dense import default_model_path

        method = "hf:" + default_model_path()
    if method.startswith(("onnx-int8:", "static:")) and not pooling:
        dense_opts["model_path"] = method
        return DenseRetriever(**dense_opts)
    if is_onnx_folder_spec(method):
        dense_opts["model_path"] = method
        return DenseRetriever(pooling=pooling, **dense_opts)
    from .hf_encoder import hf_retriever_for

    hf = hf_retriever_for(method, pooling=pooling, **dense_opts)
    if hf is not None:
        return hf
    if Path(method).expanduser().is_dir():
        folder = Path(method).expanduser()
        if onnx_folder_file(folder):
            return DenseRetriever(pooling=pooling, **{**dense_opts, "model_path": str(folder)})
        dense_opts["model_path"] = str(folder)
        return DenseRetriever(**dense_opts)
    if method == "mpnet" and dense_opts.get("model_path"):
        return DenseRetriever(**dense_opts)
    raise UsageError(f"unknown retrieval method {method!r}",
                     hint="use bm25, minilm, onnx-int8:minilm, static:minilm, onnx:FOLDER, hf-cls:FOLDER, "
                          "hf-mean:FOLDER, BASE+ADAPTER, or the path of a model folder")


def write_meta(path: str | Path, meta: dict[str, Any]) -> None:
    from ..io import atomic_write_json

    atomic_write_json(path, meta)


def read_meta(path: str | Path) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataMissingError(f"no saved index metadata at {path}") from None
