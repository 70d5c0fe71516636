"""The SCIDOCA 2025 shared task on citation discovery, masked citation prediction and citation
sentence prediction: its file shapes (seed JSONL and official ``.in``/``.label``) and its
official scoring (overview paper, Section 2)."""

from .evaluate import evaluate, evaluate_files
from .formats import (
                      EMPTY,
                      TASKS,
                      Answer,
                      Candidate,
                      Example,
                      read_answers,
                      read_examples,
                      read_official,
                      write_answers,
                      write_examples,
                      write_official,
)

__all__ = ["EMPTY", "TASKS", "Answer", "Candidate", "Example", "evaluate", "evaluate_files", "read_answers",
           "read_examples", "read_official", "write_answers", "write_examples", "write_official"]
