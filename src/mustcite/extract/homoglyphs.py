"""Letters of other scripts that look like Latin ones, read as the Latin letter inside a Latin word.

A name written "BЕRT" with a Cyrillic "Е" (U+0415), or "ＣＬＩＰ" in fullwidth letters, looks like
the name and is not it. :func:`fold` reads such a word as the Latin name it shows, one character
for one (so offsets into the text stay valid):

* a fullwidth letter or digit (U+FF10-U+FF5A) always becomes its ASCII form (NFKC's mapping);
* a Cyrillic or Greek letter that looks like a Latin one (:data:`LOOKALIKES`) becomes that letter
  only inside a word that also holds a Latin letter: a word of one script only ("Москва",
  "αβγ") is left as it is, so text in those scripts is never changed.

:func:`mixed_words` names the words that were read so, for a note.
"""

from __future__ import annotations

import re
import unicodedata

#: Cyrillic and Greek letters drawn like a Latin letter
LOOKALIKES = {
    # Cyrillic
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T",
    "Х": "X", "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ԛ": "Q", "Ԝ": "W",
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ј": "j",
    "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    # Greek
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
    "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ο": "o",
}
_FULLWIDTH = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")
_WORD = re.compile(r"\w+")
_LATIN = re.compile("[A-Za-z]")
_OTHER = re.compile("[" + "".join(LOOKALIKES) + "]")


def fold(text: str) -> str:
    """``text`` with fullwidth letters and digits as ASCII and, inside a word that holds a Latin
    letter, look-alike Cyrillic and Greek letters as the Latin ones; the same length."""
    if text.isascii():
        return text
    text = _FULLWIDTH.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    if not _OTHER.search(text):
        return text
    return _WORD.sub(_fold_word, text)


def _fold_word(m: re.Match) -> str:
    word = m.group()
    if not _LATIN.search(word) or not _OTHER.search(word):
        return word
    return "".join(LOOKALIKES.get(c, c) for c in word)


def mixed_words(text: str) -> list[tuple[str, str]]:
    """``(word as written, word as read)`` for each distinct word :func:`fold` changes, in order."""
    out: dict[str, str] = {}
    if text.isascii():
        return []
    for m in _WORD.finditer(text):
        read = fold(m.group())
        if read != m.group():
            out.setdefault(m.group(), read)
    return list(out.items())


def describe(word: str) -> str:
    """The characters of ``word`` that are not ASCII, named: "U+0415 CYRILLIC CAPITAL LETTER IE"."""
    return ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in dict.fromkeys(word) if not c.isascii())
