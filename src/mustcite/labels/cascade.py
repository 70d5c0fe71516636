"""The cascade judge: the offline LR judge everywhere, the neural judge where the LR is unsure. Not an LLM.

``cascade-lr-neural-v1`` scores each citation instance with ``offline-lr-v1`` (about 2,000 instances
a second) and, only where the LR's probability lies within ``band`` of its own threshold, also with
the neural judge (about 50 a second on two cores); there the two probabilities are averaged.  The
rule flags (used dataset, extended method, Introduction/Related-Work-only) are the offline judge's;
the decision threshold, Type II cut points and ``band`` are fitted on MultiCite DEV by
:func:`fit_cascade` and kept as ``cascade.json`` beside the neural model (``mustcite labels
fit-cascade``).  ``band`` is the narrowest of the candidates whose dev accuracy is the best, so the
neural model runs on as few contexts as the dev figures allow.

On MultiCite (3-sentence contexts, Type I proxy) averaging the two judges over *every* item is the
best combination found (test accuracy 0.819, kappa 0.611, against 0.808 / 0.593 for the LR alone),
but it costs the neural judge's full price; the cascade keeps most of that gain at a fraction of it.
Every label records ``cascade-lr-neural-v1/<neural model id>+<cascade id>``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mustcite import lazy_libs
from mustcite.errors import MustciteError
from mustcite.io import atomic_write_json
from mustcite.labels.judge import CitationInstance, Judgement, ScoringJudge, Task
from mustcite.labels.multicite import load_split, to_instance, type1_proxy, type2_proxy
from mustcite.labels.neural import NeuralJudge, choose_threshold
from mustcite.labels.offline import OfflineJudge, decide, fit_type2_cuts

VERSION = "cascade-lr-neural-v1"
FILE = "cascade.json"
BANDS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 1.0)     # 1.0: the neural judge on every instance
WEIGHT_LR = 0.5
FIT_COMMAND = "mustcite labels fit-cascade"


def combine(p_lr: np.ndarray, p_nn: np.ndarray, lr_threshold: float, band: float,
            weight_lr: float = WEIGHT_LR) -> tuple[np.ndarray, np.ndarray]:
    """Cascade probabilities and the mask of items sent to the neural judge."""
    sent = np.abs(p_lr - lr_threshold) < band
    return np.where(sent, weight_lr * p_lr + (1 - weight_lr) * p_nn, p_lr), sent


def fit_cascade(folder: str | Path | None = None, *, runtime: str = "auto", data_dir: str | None = None,
                limit: int | None = None) -> dict[str, Any]:
    """Fit ``band``, the threshold and the Type II cut points on MultiCite dev (3-sentence contexts;
    ``limit``: its first n items, for tests) for the neural model in ``folder``; write and return
    ``cascade.json``."""
    cohen_kappa_score = lazy_libs.sklearn_metrics().cohen_kappa_score

    t0 = time.time()
    lr = OfflineJudge()
    nn = NeuralJudge(folder, runtime=runtime)
    items = load_split("dev", "3", data_dir)[:limit]
    insts = [to_instance(it) for it in items]
    y = np.array([type1_proxy(it.labels) for it in items])
    p_lr = np.array([a["p"] for a in lr._analyse_many(insts)])
    p_nn = np.array([a["p"] for a in nn._analyse_many(insts)])
    rows = []
    for band in BANDS:
        p, sent = combine(p_lr, p_nn, lr.model.threshold, band)
        thr, acc = choose_threshold(p, y)
        rows.append({"band": band, "threshold": thr, "accuracy": round(acc, 4),
                     "cohen_kappa": round(float(cohen_kappa_score(y, (p >= thr).astype(int))), 4),
                     "share_to_neural": round(float(sent.mean()), 4)})
    best = max(r["accuracy"] for r in rows)
    chosen = min((r for r in rows if r["accuracy"] == best), key=lambda r: r["band"])
    p, _ = combine(p_lr, p_nn, lr.model.threshold, chosen["band"])
    cuts = fit_type2_cuts(p, [type2_proxy(it.labels) for it in items])
    cal = {"version": VERSION, "neural_model": nn.version.removesuffix("-int8"),
           "lr_model": "offline-lr-v1", "lr_threshold": lr.model.threshold, "weight_lr": WEIGHT_LR,
           "band": chosen["band"], "threshold": chosen["threshold"], "type2_cuts": [round(c, 6) for c in cuts],
           "dev": {"items": len(items), "chosen": chosen, "grid": rows,
                   "rule": "best dev accuracy; ties go to the narrowest band (fewest neural calls)"},
           "seconds": round(time.time() - t0, 1), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    atomic_write_json(nn.folder / FILE, cal)
    return cal


class CascadeJudge(ScoringJudge):
    """cascade-lr-neural-v1 (see the module docstring).  ``folder``: the neural model folder (default
    ``<work>/models/judge-neural``), which must hold ``cascade.json``; ``runtime`` as the neural judge's."""

    chunk = 20000

    def __init__(self, folder: str | Path | None = None, runtime: str = "auto"):
        self.lr = OfflineJudge()
        self.nn = NeuralJudge(folder, runtime=runtime)
        path = self.nn.folder / FILE
        if not path.is_file():
            raise MustciteError("the neural judge has no cascade calibration", path=path,
                                hint=f"run `{FIT_COMMAND}` (about two minutes)")
        try:
            self.cal = json.loads(path.read_text("utf-8"))
            self.band, self.threshold = float(self.cal["band"]), float(self.cal["threshold"])
            self.type2_cuts = [float(c) for c in self.cal["type2_cuts"]]
            self.weight_lr = float(self.cal.get("weight_lr", WEIGHT_LR))
        except (ValueError, KeyError, TypeError) as e:
            raise MustciteError(f"bad cascade calibration: {e}", path=path, hint=f"rerun `{FIT_COMMAND}`") from None
        if self.cal.get("neural_model") != self.nn.version.removesuffix("-int8"):
            raise MustciteError("the cascade calibration was fitted for another neural model", path=path,
                                hint=f"rerun `{FIT_COMMAND}`")
        digest = hashlib.sha256(json.dumps({k: self.cal[k] for k in ("band", "threshold", "type2_cuts")},
                                           sort_keys=True).encode()).hexdigest()[:8]
        self.version = f"{self.nn.version}+{digest}"
        self.name = (f"{VERSION}: offline-lr-v1, averaged with the neural judge where the LR is unsure "
                     f"(|p - {self.lr.model.threshold}| < {self.band}); not an LLM")
        self.runtime = runtime
        self.seen = self.sent = 0

    def __getstate__(self) -> dict[str, Any]:
        return {"folder": str(self.nn.folder), "runtime": self.runtime}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["folder"], state["runtime"])

    def _analyse_many(self, insts: Sequence[CitationInstance]) -> list[dict[str, Any]]:
        out = [dict(a) for a in self.lr._analyse_many(insts)]
        unsure = [i for i, a in enumerate(out) if a["n"] and abs(a["p"] - self.lr.model.threshold) < self.band]
        for i, a in zip(unsure, self.nn._analyse_many([insts[i] for i in unsure])):
            out[i]["p"] = self.weight_lr * out[i]["p"] + (1 - self.weight_lr) * a["p"]
            out[i]["neural"] = True
        self.seen += len(insts)
        self.sent += len(unsure)
        return out

    def _decide(self, a: dict[str, Any], task: Task) -> Judgement:
        return decide(a, task, self.threshold, self.type2_cuts)

    def clear_memo(self) -> None:
        self.nn.clear_memo()


__all__ = ["CascadeJudge", "VERSION", "combine", "fit_cascade"]
