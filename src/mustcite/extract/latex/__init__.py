"""LaTeX project -> :class:`~mustcite.extract.model.ExtractedPaper` (``method="latex"``): references,
contexts, sections and mention counts from the LaTeX structure, not from rendered PDF text.

Input (:func:`extract_latex`): a ``.tex`` file, a project folder, or a source archive (``.zip``,
``.tar.gz``/``.tgz``/``.tar``, arXiv's gzipped single ``.tex``; unpacked by
:mod:`mustcite.extract.archive` into a temporary folder that is always removed). Steps:

1. the main file (:mod:`.mainfile`): the one with ``\\documentclass`` and ``\\begin{document}``
   that the project's build compiles, else the top-level one with the largest include graph (a
   file that only wraps another is read through); verbatim blocks and ``\\verb``/``\\lstinline``
   are blanked (:mod:`.verbatim`); ``\\input``, ``\\include``, ``\\subfile``,
   ``\\import`` and ``\\subimport`` are followed relative to the main file's folder, never outside
   the project folder (a missing file and a path outside read the same: "not read (outside the
   project or missing)"; paths outside are never looked at), at most ``MAX_INCLUDES`` includes
   followed; comments (``%``, not ``\\%``), ``comment`` environments and ``\\iffalse`` blocks are
   dropped; circular and missing includes give a message;
2. every citation command (:mod:`.citations`: ``\\cite``, natbib's ``\\citet``/``\\citep``/... and
   their capitalised forms, biblatex's ``\\autocite``/``\\parencite``/``\\textcite``/``\\footcite``/
   ``\\smartcite`` and the multi-cite ``\\cites`` family, with optional arguments) is replaced by a
   marker; ``\\nocite`` keys are references without a mention;
3. title, abstract and sections (:mod:`.text`: ``\\section``... ``\\paragraph``, starred or not;
   ``\\appendix``) give each paragraph its label (the same labels as the Markdown path: "2 Related
   Work", "Abstract", "Appendix", "Back matter"); paragraphs go to plain text with pylatexenc,
   keeping the markers; the shared sentence splitter and three-sentence window rule give the
   contexts (:mod:`.extraction`);
4. the bibliography (:mod:`.bibliography`, parsed by :mod:`mustcite.extract.bibtex`): the ``.bib``
   files named by ``\\bibliography``/``\\addbibresource`` (else every ``.bib`` in the project),
   then a ``.bbl`` or an inline ``thebibliography`` for keys the ``.bib`` files lack. A key
   defined nowhere is still a reference (its key as text) with a message.

Reference ``target`` is the order of first citation; ``cite`` is the label as the text shows it
(numeric "3" or author-year "Vaswani et al., 2017"); ``bibkey``/``doi``/``arxiv``/``url``/``venue``
come from the bibliography. A reference needs a year for the reference-file schema: without one in
the entry (``year``/``date``) or in its key ("vaswani2017attention"), it is left out with a message.
"""

from __future__ import annotations

from .arguments import BraceIndex, braced, bracketed
from .bibliography import bib_names, read_bibliography
from .citations import MARK_END, MARK_START, MARKER, TEXTUAL_COMMANDS, Citation, citation_style, mark_citations
from .extraction import extract_latex, extract_project
from .includes import (
                       LATEX_SUFFIXES,
                       MAX_CHARS,
                       MAX_DEPTH,
                       MAX_FILE_BYTES,
                       MAX_FILES,
                       MAX_INCLUDES,
                       TEX_SUFFIXES,
                       Project,
                       expand,
                       find_inside,
                       is_inside,
                       load_project,
                       project_files,
                       read_text,
                       rel_path,
                       strip_comments,
)
from .mainfile import MAIN_NAMES, MainChoice, choose_main, find_main, main_file_line
from .text import Segment, drop_refs, paragraphs, split_segments, to_text

__all__ = [
    "LATEX_SUFFIXES", "MAIN_NAMES", "MARKER", "MARK_END", "MARK_START", "MAX_CHARS", "MAX_DEPTH", "MAX_FILES",
    "MAX_FILE_BYTES", "MAX_INCLUDES", "TEXTUAL_COMMANDS", "TEX_SUFFIXES", "BraceIndex", "Citation",
    "MainChoice", "Project",
    "Segment", "bib_names", "braced", "bracketed", "citation_style", "drop_refs", "expand", "extract_latex",
    "choose_main", "extract_project", "find_inside", "find_main", "main_file_line",
    "is_inside", "load_project", "mark_citations", "paragraphs", "project_files", "read_bibliography", "read_text",
    "rel_path", "split_segments", "strip_comments", "to_text",
]
