"""mustcite: which papers must your paper cite?

Layers, lowest first; a module imports only from its own layer or lower ones: the ground modules
(``errors``, ``io``, ``config``, ``engine``, ...) -> ``corpus`` -> ``collect`` -> ``extract`` ->
``retrieval`` -> ``labels`` -> ``benchmark`` -> ``recommend`` -> ``scidoca`` -> ``refcheck`` -> the
front ends ``api``, ``web`` and ``lsp`` -> ``cli``; this package facade sits on top.
"""

from .version import __version__

__all__ = ["Recommender", "__version__", "audit", "load", "must_cite"]


def __getattr__(name: str):
    """``mustcite.must_cite(...)``, ``mustcite.audit(...)``, ``mustcite.load(...)`` and
    ``from mustcite import Recommender`` without importing the recommender on ``import mustcite``."""
    if name == "Recommender":
        from .recommend import Recommender  # on first use: `import mustcite` stays light

        return Recommender
    if name in ("audit", "load", "must_cite"):
        from .recommend import shortcuts  # on first use: `import mustcite` stays light

        return getattr(shortcuts, name)
    raise AttributeError(f"module 'mustcite' has no attribute {name!r}")
