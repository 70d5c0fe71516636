"""How the learned SCIDOCA systems are trained: one recipe per task, shared by ``mustcite scidoca
train`` and the ``benchmarks/scidoca_*.py`` scripts.

Training paragraphs are a seeded uniform sample of the train split
(:func:`~.formats.sample_examples`); settings are chosen on a seeded sample of dev; test is never
read here.

* The dense encoder (:func:`train_encoder`, optional): MiniLM fine-tuned on ``limit`` Task 3
  train paragraphs (:mod:`.bi_encoder`); a system using it trains on other paragraphs and lists the
  encoder's paragraphs among its own training ids.
* Task 1 (:func:`train_discovery`): stage 1 on ``limit`` train paragraphs; optionally a
  cross-encoder (:mod:`.cross`, trained on other train paragraphs, or one given); then the set
  rule and the cross-encoder weight on dev.
* Task 2 (:func:`train_masked`): the slot scorer on ``limit`` train paragraphs (no tuned setting),
  optionally over a Task 1 system as Task 3 is.
* Task 3 (:func:`train_sentences`): over a Task 1 system, the citation-need classifier and the
  pair scorer on ``limit`` train paragraphs *the Task 1 system was not trained on* (its
  ``train_ids.txt``), then the rule on dev.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataMissingError
from ..io import atomic_write_bytes
from .bi_encoder import train_bi_encoder
from .cross import train_cross_encoder
from .discovery import CROSS_DEFAULT_TOP, DiscoveryModel, tune_rule
from .formats import sample_examples
from .masked import DEFAULT_ENCODER, MaskedCitationModel
from .sentences import SentenceCitationModel, tune

#: the training paragraph ids of a system, one a line, kept in its folder (stacked systems skip them)
TRAIN_IDS = "train_ids.txt"
#: cross-encoder weights tried on dev (0: stage 1 alone)
CROSS_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0)


def split_file(data: Path, split: str, task: int) -> Path:
    for name in (f"task{task}.jsonl.gz", f"task{task}.jsonl"):
        if (Path(data) / split / name).is_file():
            return Path(data) / split / name
    raise DataMissingError(f"no {split}/task{task}.jsonl[.gz] under {data}", hint="run `mustcite scidoca build` first")


def write_train_ids(folder: Path, ids: list[str]) -> None:
    atomic_write_bytes(Path(folder) / TRAIN_IDS, ("\n".join(ids) + "\n").encode())


def read_train_ids(folder: Path) -> list[str]:
    path = Path(folder) / TRAIN_IDS
    return path.read_text().split() if path.is_file() else []


def train_encoder(train: Path, out: Path, *, limit: int = 3000, seed: int = 0, progress: bool = True) -> dict[str, Any]:
    """Fine-tune the dense encoder on ``limit`` paragraphs of a Task 3 train file (:mod:`.bi_encoder`);
    saves it with its ``train_ids.txt`` in ``out`` and returns its training card."""
    examples = sample_examples(train, limit, seed=seed + 3, task=3)
    card = train_bi_encoder(examples, out, seed=seed, progress=progress)
    write_train_ids(out, [e.id for e in examples])
    return card


def encoder_settings(folder: Path | None) -> dict[str, Any]:
    """Stage 1's dense encoder: the shipped MiniLM, or a :func:`train_encoder` folder, int8 ONNX."""
    if folder is None:
        return dict(DEFAULT_ENCODER)
    if not (Path(folder) / TRAIN_IDS).is_file():
        raise DataMissingError(f"{folder} is not a trained SCIDOCA encoder (no {TRAIN_IDS})",
                               hint="train one with `mustcite scidoca train-encoder`")
    return {**DEFAULT_ENCODER, "spec": f"onnx-int8:{Path(folder).resolve()}"}


def train_discovery(train: Path, dev: Path, *, limit: int = 4000, dev_limit: int = 1000, seed: int = 0,
                    encoder: dict[str, Any] | None = None, cross_encoder: Any = None, cross_train: int = 0,
                    cross_top: int = 8, exclude: list[str] | tuple[str, ...] = (), progress: bool = True):
    """The Task 1 system and its dev report. ``cross_encoder``: a trained
    :class:`~mustcite.retrieval.cross_encoder.CrossEncoderReranker` to use; ``cross_train``: else
    train one on that many other train paragraphs (about an hour per 1,400 on two CPU cores).
    ``exclude``: paragraphs another part of the system was trained on (a fine-tuned encoder's);
    they are skipped here and listed in the returned ids."""
    examples = sample_examples(train, limit, seed=seed, task=1, exclude=exclude)
    model = DiscoveryModel(encoder=encoder).fit(examples, progress=progress)
    ids = list(dict.fromkeys([e.id for e in examples] + list(exclude)))
    del examples
    if cross_encoder is None and cross_train:
        others = sample_examples(train, cross_train, seed=seed + 1, task=1, exclude=ids)
        cross_encoder = train_cross_encoder(others, seed=seed, progress=progress)
    weights: tuple[float, ...] = (0.0,)
    if cross_encoder is not None:
        model.set_cross_encoder(cross_encoder, cross_top or CROSS_DEFAULT_TOP)
        weights = CROSS_WEIGHTS
    dev_examples = sample_examples(dev, dev_limit, seed=seed, task=1)
    report = tune_rule(model, dev_examples, weights=weights, progress=progress)
    if model.cross_weight == 0.0:
        model.set_cross_encoder(None, 0)
    return model, ids, report


def train_masked(train: Path, *, limit: int = 4000, seed: int = 0, encoder: dict[str, Any] | None = None,
                 discovery_dir: Path | None = None, exclude: list[str] | tuple[str, ...] = (), progress: bool = True):
    """The Task 2 system; with ``discovery_dir`` the Task 1 system there adds its paragraph-level P
    (trained on paragraphs other than those of its ``train_ids.txt``); ``exclude`` as in
    :func:`train_discovery`."""
    discovery = DiscoveryModel.load(discovery_dir) if discovery_dir else None
    skip = list(dict.fromkeys((read_train_ids(discovery_dir) if discovery_dir else []) + list(exclude)))
    examples = sample_examples(train, limit, seed=seed, task=2, exclude=skip)
    model = MaskedCitationModel(encoder=encoder, discovery=discovery).fit(examples, progress=progress)
    return model, list(dict.fromkeys([e.id for e in examples] + list(exclude)))


def train_sentences(train: Path, dev: Path, discovery_dir: Path, *, limit: int = 3000, dev_limit: int = 1000,
                    seed: int = 0, progress: bool = True):
    """The Task 3 system over the Task 1 system saved in ``discovery_dir``, and its dev report."""
    discovery = DiscoveryModel.load(discovery_dir)
    discovery.set_cross_encoder(None, 0)     # Task 3 uses stage 1's P only
    skip = read_train_ids(discovery_dir)
    examples = sample_examples(train, limit, seed=seed + 2, task=3, exclude=skip)
    model = SentenceCitationModel(discovery=discovery).fit(examples, progress=progress)
    ids = [e.id for e in examples]
    del examples
    report = tune(model, sample_examples(dev, dev_limit, seed=seed, task=3), progress=progress)
    return model, ids, report


def default_model_dir(work_root: Path, task: int) -> Path:
    """Where ``scidoca train --task N`` keeps its model by default."""
    return Path(work_root) / "models" / f"scidoca-task{task}"


def load_learned(task: int, folder: Path):
    """The learned system of ``task`` saved in ``folder``."""
    if not (Path(folder) / "config.json").is_file():
        raise DataMissingError(f"no Task {task} model in {folder}",
                               hint=f"train one with `mustcite scidoca train --task {task}`")
    if task == 1:
        return DiscoveryModel.load(folder)
    if task == 2:
        return MaskedCitationModel.load(folder)

    return SentenceCitationModel.load(folder)
