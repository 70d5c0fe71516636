"""Stratified validation sample of citation instances for human raters (MasterSet Section 4.3 / E.4).

Reads an extraction folder (``<stem>.json`` reference files, ``<stem>.meta.json`` sidecars from
:mod:`mustcite.extract.runner`) or, for venue/year, a ``papers.jsonl``/manifest given explicitly
(keys ``paper``/``id``/``paper_id``/``openreview_id``, ``venue``, ``year``).  Strata are (venue, year)
of the citing paper; the ``n`` instances are allocated proportionally to each stratum's number of
citation instances (largest remainder, at least one per stratum while ``n`` allows), then drawn at
random with a fixed seed.  The CSV has one row per instance with blank ``rater`` and ``label``
columns: each rater fills in a copy, and the copies concatenated form the long-form input of
``mustcite agreement``.
"""

from __future__ import annotations

import csv
import io
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from mustcite.errors import MustciteError
from mustcite.extract.runner import META_SUFFIX, iter_reference_files
from mustcite.io import atomic_write_text, iter_jsonl, read_json

COLUMNS = ["item", "citing", "target", "venue", "year", "citing_title", "ref_title", "ref_year", "cite",
           "mentions", "contexts", "rater", "label"]


def _venue_name(v: Any) -> str:
    """'NeurIPS 2024' -> 'NeurIPS'; missing -> 'unknown'."""
    text = re.sub(r"\s*\b(19|20)\d\d\b\s*", " ", str(v or "")).strip()
    return text or "unknown"


def load_manifest(path: str | Path) -> dict[str, dict[str, Any]]:
    """id -> {venue, year, title} from a JSONL manifest / papers.jsonl."""
    out: dict[str, dict[str, Any]] = {}
    for _, rec in iter_jsonl(path):
        pid = rec.get("paper") or rec.get("id") or rec.get("paper_id") or rec.get("openreview_id")
        if pid:
            out[str(pid)] = rec
    return out


def reference_files(refs_dir: str | Path) -> list[tuple[str, Path]]:
    d = Path(refs_dir)
    if not d.is_dir():
        raise MustciteError("reference folder not found", path=d)
    return list(iter_reference_files(d))


def collect_instances(refs_dir: str | Path, manifest: str | Path | None = None) -> list[dict[str, Any]]:
    """One row (without rater/label) per reference with at least one context, over every
    reference file in ``refs_dir``."""
    man = load_manifest(manifest) if manifest else {}
    rows = []
    for stem, path in reference_files(refs_dir):
        refs = read_json(path)
        if not isinstance(refs, list):
            raise MustciteError("a reference file must hold a JSON list", path=path)
        meta_path = path.with_name(stem + META_SUFFIX)
        meta = read_json(meta_path) if meta_path.is_file() else {}
        meta = {**man.get(stem, {}), **{k: v for k, v in meta.items() if v is not None}}
        for i, ref in enumerate(refs):
            if not isinstance(ref, dict):
                raise MustciteError(f"item {i} is not an object", path=path)
            if not ref.get("contexts"):
                continue   # never cited in the text: nothing for a rater (or a judge) to read
            ctx = " || ".join(f"[{c.get('section', '')}] {c.get('context', '')}" for c in ref.get("contexts") or [])
            rows.append({"item": f"{stem}#{ref.get('target', i + 1)}", "citing": stem,
                         "target": ref.get("target", i + 1), "venue": _venue_name(meta.get("venue")),
                         "year": meta.get("year") if meta.get("year") is not None else "",
                         "citing_title": meta.get("title") or "", "ref_title": ref.get("title", ""),
                         "ref_year": ref.get("year", ""), "cite": ref.get("cite", ""),
                         "mentions": ref.get("mentions", len(ref.get("contexts") or [])), "contexts": ctx})
    return rows


def allocate(sizes: dict[Any, int], n: int) -> dict[Any, int]:
    """Proportional allocation by largest remainder, at least 1 per stratum when n >= #strata."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    keys = sorted(sizes, key=str)
    base = {k: 1 if n >= len(keys) else 0 for k in keys}
    rest = n - sum(base.values())
    spare = {k: sizes[k] - base[k] for k in keys}
    spare_total = sum(spare.values())
    quota = {k: rest * spare[k] / spare_total if spare_total else 0 for k in keys}
    alloc = {k: base[k] + int(quota[k]) for k in keys}
    left = n - sum(alloc.values())
    for k in sorted(keys, key=lambda k: (-(quota[k] - int(quota[k])), str(k))):
        if left <= 0:
            break
        if alloc[k] < sizes[k]:
            alloc[k] += 1
            left -= 1
    return alloc


def stratified_sample(rows: list[dict[str, Any]], n: int, seed: int = 0) -> list[dict[str, Any]]:
    if n < 1:
        raise MustciteError(f"sample size must be >= 1, got {n}")
    strata: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        strata[(r["venue"], str(r["year"]))].append(r)
    alloc = allocate({k: len(v) for k, v in strata.items()}, n)
    rng = random.Random(seed)
    out = []
    for k in sorted(strata):
        out.extend(rng.sample(strata[k], alloc[k]))
    return sorted(out, key=lambda r: (r["venue"], str(r["year"]), r["item"]))


def write_sample(refs_dir: str | Path, out: str | Path, n: int = 200, seed: int = 0,
                 manifest: str | Path | None = None) -> dict[str, Any]:
    """Draw the sample and write the CSV; returns a summary (instances, strata, drawn per stratum)."""
    rows = collect_instances(refs_dir, manifest)
    if not rows:
        raise MustciteError("no citation instances found (no reference files?)", path=refs_dir)
    sample = stratified_sample(rows, n, seed)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in sample:
        w.writerow({**r, "rater": "", "label": ""})
    atomic_write_text(out, buf.getvalue())
    per: dict[str, int] = defaultdict(int)
    for r in sample:
        per[f"{r['venue']}/{r['year']}"] += 1
    return {"out": str(out), "instances": len(rows), "drawn": len(sample),
            "strata": len({(r['venue'], str(r['year'])) for r in rows}), "per_stratum": dict(sorted(per.items()))}
