"""mustcite: which papers must your paper cite?

Layers, lowest first; a module imports only from its own layer or lower ones: the ground modules
(``errors``, ``io``, ``config``, ``engine``, ...) -> ``corpus`` -> ``collect`` -> ``extract`` ->
``retrieval`` -> ``labels`` -> ``benchmark`` -> ``recommend`` -> ``scidoca`` -> the front ends
``api`` and ``web`` -> ``cli``; this package facade sits on top.
"""

from .version import __version__

__all__ = ["Recommender", "__version__"]


def __getattr__(name: str):
    """``from mustcite import Recommender`` without importing the recommender on ``import mustcite``."""
    if name == "Recommender":
        from .recommend import Recommender

        return Recommender
    raise AttributeError(f"module 'mustcite' has no attribute {name!r}")
