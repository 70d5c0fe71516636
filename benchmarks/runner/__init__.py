"""The runner of ``python -m benchmarks``: entries (:mod:`.entries`), the table renderer
(:mod:`.render`, with the few named row-builders of :mod:`.builders`) and the commands (:mod:`.cli`)."""
