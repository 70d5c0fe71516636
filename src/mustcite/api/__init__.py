"""The REST API (FastAPI): ``mustcite.api.app.create_app(recommender)``; ``mustcite serve`` runs it."""

from ..lazy_exports import lazy_exports

#: public name -> the submodule that defines it, imported on first use (FastAPI, uvicorn)
_LAZY = {
    "create_app": "app",
    "create_rate_app": "rate",
    "ServeSettings": "serve",
    "build_app": "serve",
    "running": "serve",
    "Timeouts": "timeouts",
}

__all__ = [*_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
