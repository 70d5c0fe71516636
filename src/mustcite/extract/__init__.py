"""Extraction: full text (Markdown, GROBID TEI, PDF) -> per-paper reference files; then linking.

Entry points: :func:`mustcite.extract.runner.extract_paths` (the runner behind ``mustcite extract``)
and :func:`mustcite.extract.link.link_dir` (``mustcite link``). Submodules are imported lazily so
``import mustcite.extract`` stays cheap: every name of ``__all__`` is imported on first use.
"""

from ..lazy_exports import lazy_exports

#: public name -> the submodule that defines it, imported on first use
_LAZY = {
    # readers: one format -> an ExtractedPaper
    "extract_latex": "latex",
    "find_main": "latex",
    "project_files": "latex",
    "extract_markdown": "markdown",
    "extract_pdf": "pdf",
    "parse_tei": "tei",
    "split_sentences": "sentences",
    # reading Nougat Markdown step by step: its parts, its reference entries, its citation markers
    "parse_document": "markdown",
    "reference_entries": "markdown",
    "reference_targets": "markdown",
    "searched_body": "markdown",
    "citation_style": "markdown",
    "iter_cited_sentences": "markdown",
    "RefIndex": "citations",
    "find_citations": "citations",
    # bibliography files (.bib, .bbl): their entries, and LaTeX field text decoded
    "decode_latex": "bibtex",
    "parse_bbl": "bibtex",
    "parse_bib": "bibtex",
    # the runner behind ``mustcite extract``
    "LABELS_SUBDIR": "runner",
    "META_SUFFIX": "runner",
    "extract_paths": "runner",
    "iter_reference_files": "runner",
    # linking references to the corpus (``mustcite link``)
    "FUZZY_THRESHOLD": "link",
    "TitleIndex": "link",
    "clean_title": "link",
    "identifier_keys": "link",
    "link_dir": "link",
    "link_references": "link",
    "match_reference": "link",
    "recover_title": "link",
    # the catalogue of cited works outside the corpus
    "NAMES_FILE": "works",
    "WorkIndex": "works",
    "cluster_mentions": "works",
    "collect_mentions": "works",
    "identifies": "works",
    "is_work_id": "works",
    "make_work": "works",
    "marker_starts": "works.names",
    "MENTIONS_FILE": "works.mention_table:TABLE_FILE",
    "MENTIONS_SUMMARY_FILE": "works.mention_table:SUMMARY_FILE",
    "build_mention_table": "works.mention_table",
    "mention_arrow_table": "works.linkprob:arrow_table",
    "form_stats": "works.linkprob",
    "out_of_fold_stats": "works.linkprob",
    "paper_uses": "works.linkprob",
    "target_stats": "works.linkprob",
    "name_key": "works",
    "resolved_entries": "works",
}

__all__ = [*_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
