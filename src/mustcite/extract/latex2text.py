"""The one LaTeX-to-text converter of the extraction (pylatexenc), for fields and for drafts.

pylatexenc's default rules drop the argument of a macro they have no rule for, and they have none
for several text-style commands authors put names in (``\\texttt{GPT-4}``, ``\\textsf{...}``,
``\\mbox{...}``): the name would vanish from the sentence. :func:`converter` adds those rules and
keeps the text of ``\\textcolor{color}{text}`` inside another command (pylatexenc's own rule loses
it there).

pylatexenc builds its parser's table of known macros anew for every text it parses (a fifth of a
millisecond, more than the parse of a short paragraph); :func:`to_text` parses with one table
built once.
"""

from __future__ import annotations

from functools import lru_cache

from pylatexenc import latexwalker
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

#: text-style commands whose single argument is their text
TEXT_COMMANDS = ("texttt", "textsf", "textup", "textmd", "textnormal", "mbox", "uline", "hl", "sout",
                 "nolinkurl", "path", "fbox", "textsuperscript", "textsubscript")


@lru_cache(maxsize=1)
def converter():
    """A shared ``LatexNodes2Text`` (math kept as text) with the rules above."""
    db = get_default_latex_context_db()          # a new database: pylatexenc's own stays as it is
    db.add_context_category("mustcite-text", prepend=True, macros=[
        *(MacroTextSpec(name, simplify_repl="%(1)s") for name in TEXT_COMMANDS),
        MacroTextSpec("textcolor", simplify_repl="%(3)s"),
        MacroTextSpec("colorbox", simplify_repl="%(3)s"),
    ])
    return LatexNodes2Text(math_mode="text", latex_context=db)


@lru_cache(maxsize=1)
def _walker_context():
    return latexwalker.get_default_latex_context_db()


def to_text(latex: str) -> str:
    """``latex`` as plain text, by :func:`converter`, parsed with the table of macros built once."""
    return converter().latex_to_text(latex, latex_context=_walker_context())
