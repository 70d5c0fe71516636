"""Main track or not: rules (offline default), a checked-in override file, an optional LLM judge.

For every track / volume / issue / section name a collector meets, :class:`TrackClassifier` says
whether it is the main conference (MasterSet keeps main-conference full papers only). Order:

1. the override file (``collect/tracks_override.json`` in the package, or ``--tracks-override
   FILE``): entries ``{"venue": "AAAI", "year": 2024 (optional), "match": "regex", "main": bool,
   "note": "..."}``, first match wins. A person edits it when a rule or the judge is wrong;
2. the judge, when one is configured (``--track-judge openai|gemini|local``, built by
   :func:`mustcite.labels.track_judge.make_track_judge`): one yes/no question
   per distinct (venue, year, track) name, answers cached on disk (``<work>/collect/track_answers.json``);
3. the rules: :func:`mustcite.corpus.venues.is_main_track` (findings, demos, industry, SRW,
   tutorials, workshops, D&B, surveys ... are not main) plus the collector-side words in
   :data:`EXTRA_ANCILLARY` (front matter, student abstracts, senior member, EAAI/IAAI ...).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..corpus.venues import is_main_track
from ..errors import MustciteError
from ..io import atomic_write_json, read_json

EXTRA_ANCILLARY = re.compile(
    r"\bpreface\b|front ?matter|student abstract|senior member|new faculty|\beaai\b|\biaai\b|"
    r"educational advances|innovative applications|demonstration|doctoral consortium|"
    r"competition|invited talk|keynote|position paper track|journal track|"
    r"sister conferences?|best papers? from",
    re.IGNORECASE)

TRACK_JUDGES = ("rules", "openai", "gemini", "local")


@dataclass
class OverrideRule:
    venue: str
    match: re.Pattern
    main: bool
    year: int | None = None
    note: str = ""


def load_overrides(path: str | Path | None = None) -> list[OverrideRule]:
    if path is None:
        text = resources.files("mustcite.collect").joinpath("tracks_override.json").read_text(encoding="utf-8")
        where = "mustcite/collect/tracks_override.json"
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise MustciteError(f"malformed JSON: {exc}", path=where) from None
    else:
        data = read_json(path)       # names the file: not UTF-8, malformed, nested too deeply
        where = str(path)
    rules = []
    for i, r in enumerate(data.get("rules", []) if isinstance(data, dict) else []):
        try:
            rules.append(OverrideRule(venue=str(r["venue"]), match=re.compile(r["match"], re.IGNORECASE),
                                      main=bool(r["main"]), year=int(r["year"]) if r.get("year") else None,
                                      note=str(r.get("note", ""))))
        except (KeyError, TypeError, ValueError, re.error) as exc:
            raise MustciteError(f"bad override rule #{i + 1}: {exc}", path=where, field="rules") from None
    return rules


def rules_main(track: str) -> bool:
    return is_main_track(track) and not EXTRA_ANCILLARY.search(track or "")


#: a chat function: (system, user) -> answer text
Chat = Callable[[str, str], str]

_SYSTEM = ("You classify tracks of computer-science conference proceedings. Answer with one word: "
           "MAIN if the papers of this track are refereed full papers of the main conference "
           "(including main-conference special tracks), OTHER for findings, workshops, demos, "
           "student/doctoral, industry, tutorials, abstracts, journal-first or front matter.")


class TrackJudge:
    """LLM yes/no on a track name, with answers cached in a JSON file."""

    def __init__(self, chat: Chat, name: str, cache_path: str | Path | None = None):
        self.chat = chat
        self.name = name
        self.cache_path = Path(cache_path) if cache_path else None
        self._cache: dict[str, bool] = {}
        if self.cache_path and self.cache_path.is_file():
            try:
                self._cache = {k: bool(v) for k, v in json.loads(self.cache_path.read_text("utf-8")).items()}
            except (ValueError, UnicodeDecodeError, AttributeError, RecursionError, OSError):
                self._cache = {}
        self.calls = 0

    def __call__(self, venue: str, year: int, track: str) -> bool | None:
        key = f"{self.name}|{venue}|{year}|{track}"
        if key in self._cache:
            return self._cache[key]
        try:
            answer = self.chat(_SYSTEM, f"Venue: {venue} {year}\nTrack: {track}\nAnswer MAIN or OTHER.")
        except Exception:   # noqa: BLE001 - a failed call falls back to the rules
            return None
        self.calls += 1
        word = (answer or "").strip().upper()
        if word.startswith("MAIN"):
            value = True
        elif word.startswith("OTHER"):
            value = False
        else:
            return None
        self._cache[key] = value
        if self.cache_path:
            atomic_write_json(self.cache_path, self._cache)
        return value


@dataclass
class TrackClassifier:
    overrides: list[OverrideRule] = field(default_factory=load_overrides)
    judge: TrackJudge | None = None

    def classify(self, venue: str, year: int, track: str) -> tuple[bool, str]:
        """(main, what decided): ``override``, ``llm:<name>`` or ``rules``."""
        for r in self.overrides:
            if r.venue.lower() == venue.lower() and (r.year is None or r.year == year) and r.match.search(track or ""):
                return r.main, "override"
        if self.judge is not None and track:
            v = self.judge(venue, year, track)
            if v is not None:
                return v, f"llm:{self.judge.name}"
        return rules_main(track), "rules"
