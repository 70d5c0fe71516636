"""The benchmark scripts, their experiment entries and one runner.

Each script still runs on its own (``python benchmarks/NAME.py``, writing
``benchmarks/results/<name>.json``); ``benchmarks/experiments/*.yaml`` say, per documentation page,
which command reproduces which result and which figures it must hold; ``python -m benchmarks``
lists, runs and checks them and renders the documentation's tables (:mod:`benchmarks.runner`).
"""
