"""Citation context windows (the three-sentence rule of the MasterSet paper, Section 3.4).

The window is the citing sentence with one sentence before and one after, inside its paragraph.
Edge rules: at a paragraph start, the sentence and the two after; at its end, the two before and
the sentence; in a one- or two-sentence paragraph, what there is.
"""

from __future__ import annotations


def window_bounds(n: int, i: int, size: int = 3) -> tuple[int, int]:
    """Half-open sentence range ``[a, b)`` of the window around sentence ``i`` of ``n``."""
    if n <= 0 or not 0 <= i < n:
        raise ValueError(f"sentence index {i} outside a paragraph of {n} sentences")
    half = size // 2
    a, b = i - half, i + half + 1
    if a < 0:
        a, b = 0, min(n, size)
    elif b > n:
        a, b = max(0, n - size), n
    return a, b


def context_windows(sentences: list[str], i: int, size: int = 3) -> str:
    """The context window text for citing sentence ``i`` of a paragraph's ``sentences``."""
    a, b = window_bounds(len(sentences), i, size)
    return " ".join(s.strip() for s in sentences[a:b])


def add_context(contexts: list, seen: set[tuple[str, str]], section: str, text: str, factory) -> bool:
    """Append ``factory(section, text)`` unless this window was already stored; True if added."""
    key = (section, text)
    if key in seen:
        return False
    seen.add(key)
    contexts.append(factory(section=section, context=text))
    return True
