"""The SCIDOCA 2025 shared task on citation discovery, masked citation prediction and citation
sentence prediction: its file shapes (seed JSONL and official ``.in``/``.label``) and its
official scoring (overview paper, Section 2)."""

from ..lazy_exports import lazy_exports
from .evaluate import evaluate, evaluate_files
from .formats import (
    EMPTY,
    TASKS,
    Answer,
    Candidate,
    Example,
    Origin,
    example_from_json,
    read_answers,
    read_examples,
    read_official,
    sample_examples,
    write_answers,
    write_examples,
    write_official,
)

#: public name -> the submodule that defines it, imported on first use so that ``import
#: mustcite.scidoca`` stays cheap
_LAZY = {
    # the systems
    "AllCandidates": "floors",
    "BM25TopK": "floors",
    "MAX_SEQ_LENGTH": "bi_encoder",
    "DEFAULT_ENCODER": "masked",
    "SentenceRule": "sentences",
    "candidate_text": "cross",
    "gold_ids": "cross",
    "paragraph_text": "cross",
    "train_cross_encoder": "cross",
    # training them (``mustcite scidoca train``)
    "default_model_dir": "training",
    "encoder_settings": "training",
    "load_learned": "training",
    "read_train_ids": "training",
    "split_file": "training",
    "train_discovery": "training",
    "train_encoder": "training",
    "train_masked": "training",
    "train_sentences": "training",
    "write_train_ids": "training",
}

__all__ = ["EMPTY", "TASKS", "Answer", "Candidate", "Example", "Origin", "evaluate", "evaluate_files",
           "example_from_json", "read_answers", "read_examples", "read_official", "sample_examples", "write_answers",
           "write_examples", "write_official", *_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
