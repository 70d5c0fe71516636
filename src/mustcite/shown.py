"""Values read from input (a draft, a ``.bib`` file, a query, the corpus) as every report shows them.

A title, a quote, a note or a key is printed as read, so it could carry what a terminal or a page
acts on: an escape sequence (clear the screen, set the window title, an OSC 8 hyperlink whose text
hides its target), another C0 or C1 control character, DEL, or a bidirectional control that
reorders the text around it (U+202E). Every value is shown through one function of this module,
which writes each such character as an escape instead, ``\\x1b`` or ``\\u202e``, so that it is
seen and never acted on:

* :func:`shown` for text that may span lines (a tab and a line break are kept; a lone carriage
  return is escaped, since it moves back to the start of the line);
* :func:`shown_line` for a table cell or a one-line message (any run of white space, line breaks
  included, becomes one space);
* :func:`json_shown` for JSON already encoded (``json.dumps`` escapes C0 controls itself, but with
  ``ensure_ascii=False`` leaves DEL, C1 and bidirectional controls raw): those become ``\\uXXXX``
  escapes, so the JSON reads back to the same values;
* :func:`markdown_shown` and :func:`markdown_key` for a Markdown table cell: also every Markdown
  or HTML special character backslash-escaped (no image, link, HTML tag, autolink or emphasis
  survives);
* :func:`rich_shown` for a cell of a ``rich`` table: also rich's console markup escaped
  (``[bold]`` in a title is shown as written).

The escapes are shown as typed: a title that holds the six characters ``\\x1b`` reads the same as
one holding the escape character, and only the second was changed.
"""

from __future__ import annotations

import re

#: what is never printed raw: C0 controls but tab and line feed, DEL, C1 controls, and the
#: bidirectional controls (embeddings, overrides and isolates U+202A-U+202E, U+2066-U+2069; the
#: marks U+200E, U+200F and U+061C)
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: what :data:`UNSAFE` finds that ``json.dumps`` leaves raw (it escapes C0 controls itself)
_JSON_RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: white space that ends a line or a cell: line breaks of every kind, tabs, form feeds
_BREAKS = re.compile(r"[\s\x85\u2028\u2029]+")


def _escape(m: re.Match) -> str:
    o = ord(m.group())
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def shown(value: object) -> str:
    """``value`` as text, each character of :data:`UNSAFE` written as its escape (``\\x1b``,
    ``\\u202e``); tabs and line breaks kept (a ``\\r\\n`` pair as one line break)."""
    text = str(value if value is not None else "")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return UNSAFE.sub(_escape, text)


def shown_line(value: object) -> str:
    """``value`` on one line: every run of white space (line breaks, tabs, U+2028) as one space,
    then as :func:`shown` writes it."""
    return shown(_BREAKS.sub(" ", str(value if value is not None else "")))


def json_shown(encoded: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with DEL, the C1 controls and the
    bidirectional controls written as ``\\uXXXX`` escapes: the same values once read back. These
    characters can only be inside JSON strings, where the escape is valid."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)


#: characters that are Markdown or HTML syntax, escaped with a backslash in a Markdown report
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>!|#~&])")
#: the start of a bare URL or www address (GitHub links them without any brackets)
_MD_AUTOLINK = re.compile(r"(?i)(?<=[a-z0-9])(:)(?=//)|(?<=\bwww)(\.)")


def markdown_shown(value: object) -> str:
    """``value`` as literal text of a Markdown table cell: on one line, controls escaped
    (:func:`shown_line`), and every Markdown/HTML special character backslash-escaped."""
    text = shown_line(value)
    return _MD_AUTOLINK.sub(r"\\\1\2", _MD_SPECIAL.sub(r"\\\1", text))


def markdown_key(value: object) -> str:
    """A key as an inline code span (readable as written), or as :func:`markdown_shown` writes it
    when it holds a backtick, a pipe, a backslash, white space other than a space, or a character
    :func:`shown` escapes (a code span in a table cell cannot hold those as they are)."""
    key = str(value if value is not None else "")
    if key and not re.search(r"[`|\\\s\x85\u2028\u2029]", key.replace(" ", "")) and not UNSAFE.search(key):
        return f"`{key}`"
    return markdown_shown(key)


def markdown_url(url: object) -> str | None:
    """An ``http(s)`` URL fit for a Markdown link target (``(`` ``)`` ``<`` ``>``, white space,
    quotes and anything :func:`shown` escapes percent-encoded); None for any other scheme."""
    text = str(url or "").strip()
    if not re.match(r"(?i)https?://[^\s/]", text):
        return None
    return re.sub(r"[()<>\"'`\\\s\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]",
                  lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), text)


def rich_shown(value: object) -> str:
    """``value`` for a cell of a ``rich`` table or a ``rich`` print: on one line, controls escaped
    (:func:`shown_line`) and rich's console markup escaped (``[bold]`` is shown as written)."""
    from rich.markup import escape  # rich loads only where a rich table is printed

    return escape(shown_line(value))
