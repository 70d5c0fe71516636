"""The ColBERT model through PyLate: loading PyLate (and its shims for sentence-transformers 6),
the encoder settings, the model (transformer + optional projection) built from its modules, and a
trained ColBERT-NTX folder saved and loaded (``colbert.json``, ``1_Dense/``, ``0_Transformer/``)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ... import lazy_libs
from ...errors import DataMissingError, MissingLibraryError, MustciteError
from ...io import atomic_write_json
from ..embeddings import model_key
from ..vectors import default_model_path

PYLATE_HINT = lazy_libs.PYLATE_HINT
COLBERT_CONFIG = "colbert.json"
DENSE_DIR = "1_Dense"
TRANSFORMER_DIR = "0_Transformer"


def require_pylate():
    """The ``pylate`` module (its submodules imported), or a clear error saying how to install it."""
    pylate = lazy_libs.pylate("ColBERT")
    _patch_pylate()
    return pylate


_PATCHED = False


def _patch_pylate() -> None:
    """PyLate 1.6.0 on sentence-transformers 6: ``_text_length`` and ``_model_config`` are gone."""
    global _PATCHED
    if _PATCHED:
        return
    ColBERT = lazy_libs.pylate().models.ColBERT
    if not hasattr(ColBERT, "_text_length"):
        def _text_length(self, text):
            if isinstance(text, str):
                return len(text)
            if isinstance(text, dict):
                return len(next(iter(text.values()), ""))
            try:
                return sum(len(t) for t in text)
            except TypeError:
                return 1
        ColBERT._text_length = _text_length
    _PATCHED = True


@dataclass(frozen=True)
class ColbertSettings:
    """Token limits and batch size of the encoder (kept in a trained folder's ``colbert.json``)."""

    query_length: int = 128
    document_length: int = 180
    batch_size: int = 32



@dataclass
class ColbertModel:
    """A PyLate ColBERT = transformer + projection; ``projection`` None is the identity (zero-shot)."""

    transformer_path: str
    projection: Any = None              # pylate.models.Dense (384 -> dim, no bias) or None
    settings: ColbertSettings = field(default_factory=ColbertSettings)
    folder: str | None = None           # the trained folder it was loaded from
    _pylate: Any = None                 # the identity-projection pylate ColBERT that encodes

    @property
    def dim(self) -> int:
        return int(self.projection.out_features) if self.projection is not None else 384

    @property
    def name(self) -> str:
        return "colbert-ntx" if self.projection is not None else "colbert"

    def encoder(self):
        """PyLate ``models.ColBERT`` with an identity projection: normalised transformer token vectors."""
        if self._pylate is None:
            self._pylate = build_pylate(self.transformer_path, None, self.settings)
        return self._pylate

    def cache_key(self) -> str:
        return token_cache_key(self.transformer_path, self.settings)

    def project(self, vectors: np.ndarray) -> np.ndarray:
        """Token vectors (n, 384) -> this model's normalised (n, dim) vectors, float32."""
        v = np.asarray(vectors, dtype=np.float32)
        if self.projection is not None:
            w = self.projection.linear.weight.detach().cpu().numpy().astype(np.float32)   # (dim, 384)
            v = v @ w.T
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.maximum(n, 1e-12)


def build_pylate(transformer_path: str, projection, settings: ColbertSettings):
    """PyLate ``models.ColBERT`` from its modules: transformer + projection (identity when None)."""
    models = require_pylate().models
    torch = lazy_libs.torch("ColBERT")
    Transformer = lazy_libs.sentence_transformers_models("ColBERT").Transformer
    tr = Transformer(str(transformer_path), max_seq_length=max(settings.document_length, settings.query_length))
    dense = projection
    if dense is None:
        hidden = tr.get_word_embedding_dimension() if hasattr(tr, "get_word_embedding_dimension") \
            else tr.auto_model.config.hidden_size
        dense = models.Dense(in_features=hidden, out_features=hidden, bias=False, init_weight=torch.eye(hidden))
    m = models.ColBERT(modules=[tr, dense], device="cpu", query_length=settings.query_length,
                       document_length=settings.document_length, query_prefix="", document_prefix="",
                       do_query_expansion=False)
    m._model_config = getattr(m, "_model_config", None) or {}
    return m


def load_colbert(folder: str | Path | None = None) -> ColbertModel:
    """The zero-shot model (``folder`` None) or a trained ColBERT-NTX folder."""
    if folder is None:
        return ColbertModel(default_model_path())
    folder = Path(folder).expanduser()
    cfg_file = folder / COLBERT_CONFIG
    if not cfg_file.is_file():
        raise DataMissingError(f"{folder} is not a ColBERT model folder (no {COLBERT_CONFIG})",
                               hint="train one with `mustcite benchmark train-colbert`")
    require_pylate()
    try:
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        settings = ColbertSettings(**cfg["settings"])
    except (ValueError, KeyError, TypeError) as exc:
        raise MustciteError(f"bad ColBERT config: {exc}", path=cfg_file) from None
    transformer = folder / TRANSFORMER_DIR if (folder / TRANSFORMER_DIR).is_dir() else None
    if transformer is None:
        base = cfg.get("base_model") or ""
        transformer = Path(base) if base and Path(base).is_dir() else Path(default_model_path())
    projection = _load_dense(folder / DENSE_DIR) if (folder / DENSE_DIR).is_dir() else None
    return ColbertModel(str(transformer), projection, settings, folder=str(folder))


def _load_dense(folder: Path):
    """A saved PyLate ``Dense`` (its own ``Dense.load`` chokes on sentence-transformers 6 config keys)."""
    models = require_pylate().models
    load_file = lazy_libs.safetensors_torch("ColBERT").load_file
    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        dense = models.Dense(in_features=int(cfg["in_features"]), out_features=int(cfg["out_features"]),
                             bias=bool(cfg.get("bias", False)), use_residual=bool(cfg.get("use_residual", False)))
        dense.load_state_dict(load_file(str(folder / "model.safetensors")))
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise MustciteError(f"cannot load the ColBERT projection: {exc}", path=folder) from None
    return dense.eval()


def save_colbert(model: ColbertModel, folder: str | Path, *, extra: dict[str, Any] | None = None) -> None:
    """``colbert.json`` + ``1_Dense/`` (PyLate Dense) [+ ``0_Transformer/`` when it was trained]."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if model.projection is not None:
        (folder / DENSE_DIR).mkdir(parents=True, exist_ok=True)
        model.projection.save(str(folder / DENSE_DIR))
    base = default_model_path()
    atomic_write_json(folder / COLBERT_CONFIG, {
        "library": "pylate", "pylate_version": pylate_version(), "base_model": base,
        "dim": model.dim, "projection": DENSE_DIR if model.projection is not None else None,
        "transformer": TRANSFORMER_DIR if (folder / TRANSFORMER_DIR).is_dir() else "base_model",
        "settings": asdict(model.settings), "query_prefix": "", "document_prefix": "",
        "do_query_expansion": False, "similarity": "MaxSim", **(extra or {})})


def pylate_version() -> str | None:
    """The installed PyLate's version (recorded with a model and in results), or None when PyLate
    is not installed."""
    try:
        return lazy_libs.pylate(submodules=False).__version__
    except MissingLibraryError:
        return None



def token_cache_key(transformer_path: str | Path, settings: ColbertSettings) -> str:
    """The token cache key of a transformer with these length limits (the projection is not in it)."""
    base = model_key(transformer_path, max_seq_length=0, normalize=True)
    h = hashlib.sha256(f"{base};q={settings.query_length};d={settings.document_length};"
                       f"pylate-identity-noprefix-noexpansion-v1".encode()).hexdigest()[:12]
    return f"{base.rsplit('-', 1)[0]}-colbert-{h}"

