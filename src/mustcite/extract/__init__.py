"""Extraction: full text (Markdown, GROBID TEI, PDF) -> per-paper reference files; then linking.

Entry points: :func:`mustcite.extract.run.extract_paths` (the runner behind ``mustcite extract``)
and :func:`mustcite.extract.link.link_dir` (``mustcite link``). Submodules are imported lazily so
``import mustcite.extract`` stays cheap.
"""
