"""Arguments of LaTeX commands: the ``{...}`` group or optional ``[...]`` argument at a position
of the source, read without a full TeX parser (backslash escapes and nested braces respected)."""

from __future__ import annotations


def braced(text: str, start: int) -> tuple[str, int] | None:
    """``(content, index after)`` of the brace group opening at ``text[start]`` (skipping white
    space); None when there is none or it never closes."""
    i = start
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text) or text[i] != "{":
        return None
    depth = 0
    j = i
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1:j], j + 1
        j += 1
    return None


def bracketed(text: str, start: int) -> tuple[str, int] | None:
    """``(content, index after)`` of an optional ``[...]`` argument at ``text[start]`` (white space
    skipped, nested braces allowed); None when there is none."""
    i = start
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text) or text[i] != "[":
        return None
    depth = 0
    for j in range(i + 1, min(len(text), i + 2000)):
        c = text[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "]" and depth <= 0:
            return text[i + 1:j], j + 1
    return None
