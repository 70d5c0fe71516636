"""The REST API (FastAPI): ``mustcite.api.app.create_app(recommender)``; ``mustcite serve`` runs it."""

import importlib

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


def __getattr__(name: str):
    """The names of :data:`_LAZY`, imported on first use (PEP 562)."""
    try:
        module, _, attr = _LAZY[name].partition(":")
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
