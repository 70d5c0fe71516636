"""mustcite: which papers must your paper cite?

Stages, in the order data flows: ``corpus`` -> ``extract`` -> ``labels`` -> ``benchmark`` ->
``retrieval`` -> ``recommend``; ``cli``, ``api`` and ``web`` are thin front ends over them.
"""

__version__ = "0.1.0"
