"""Section labels: which part of a paper a heading opens, and the label its contexts carry.

A context's label is its main section heading as written ("4 Experiments"); subsection
headings ("4.2 Baselines", or Nougat's unnumbered "### Baselines") keep the main label.
Special parts get fixed labels: "Abstract", "Appendix", "Back matter" (acknowledgments, funding,
author contributions), "References"; the NeurIPS paper checklist is "Checklist" (not body text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ABSTRACT, APPENDIX, BACK_MATTER, REFERENCES, CHECKLIST = (
    "Abstract", "Appendix", "Back matter", "References", "Checklist")

_HEADING = re.compile(r"^(#{1,6})\s*(.*?)\s*#*\s*$")
_REFS = re.compile(r"^(?:\d+\.?\s*)?(?:references?(?: and notes)?|bibliography|literature cited|works cited)\s*:?$",
                   re.I)
_APPX = re.compile(r"^(?:appendix|appendices|supplementary|supplemental|technical appendix)\b", re.I)
_LETTER = re.compile(r"^[A-Z](?:\.\d+)+\.?\s+\S")             # "A.1 Proofs"
_LETTER_MAIN = re.compile(r"^[A-Z]\.?\s+[A-Z]")                # "A Proofs"
_BACK = re.compile(r"^(?:\d+\.?\s*)?(?:acknowledg|funding|author contributions?|contribution statement|"
                   r"disclosure of funding|competing interests|conflicts? of interest)", re.I)
BACK_MATTER_RE = _BACK
_CHECK = re.compile(r"paper checklist|^checklist$", re.I)
_MAIN_NUM = re.compile(r"^(\d{1,2})\.?\s+(\S.*)$")
_SUB_NUM = re.compile(r"^\d{1,2}\.\d")


@dataclass
class Heading:
    level: int        # number of '#'
    text: str         # heading text without '#' and emphasis


def parse_heading(line: str) -> Heading | None:
    """A Markdown heading line -> Heading; None for other lines."""
    m = _HEADING.match(line)
    if not m:
        return None
    text = re.sub(r"[*_]{1,3}", "", m.group(2)).strip()
    return Heading(len(m.group(1)), text) if text else None


def classify(h: Heading, *, after_references: bool, current: str) -> str:
    """The label that text under heading ``h`` carries (``current`` when it is a subsection)."""
    t = h.text
    if _CHECK.search(t):
        return CHECKLIST
    if re.fullmatch(r"abstract", t, re.I):
        return ABSTRACT
    if _REFS.match(t):
        return REFERENCES
    if _BACK.match(t):
        return BACK_MATTER
    if _APPX.match(t) or _LETTER.match(t):
        return APPENDIX
    if after_references:
        return APPENDIX
    if _LETTER_MAIN.match(t) and current == APPENDIX:
        return APPENDIX
    if _SUB_NUM.match(t):
        return current if current not in (ABSTRACT, BACK_MATTER, "") else t.split()[0].split(".")[0]
    m = _MAIN_NUM.match(t)
    if m:
        return f"{m.group(1)} {m.group(2)}"
    if h.level <= 2:
        return t
    return current if current not in (ABSTRACT, "") else t
