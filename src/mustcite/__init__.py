"""mustcite: which papers must your paper cite?

Stages, in the order data flows: ``corpus`` -> ``extract`` -> ``labels`` -> ``benchmark`` ->
``retrieval`` -> ``recommend``; ``cli``, ``api`` and ``web`` are thin front ends over them.
"""

__version__ = "0.1.0"


def __getattr__(name: str):
    """``from mustcite import Recommender`` without importing the recommender on ``import mustcite``."""
    if name == "Recommender":
        from .recommend import Recommender

        return Recommender
    raise AttributeError(f"module 'mustcite' has no attribute {name!r}")
