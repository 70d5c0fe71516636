"""What a command or server prints besides its answer: its own lines only, unless ``-v`` asks for more.

The libraries under mustcite log and warn on their own (bm25s at DEBUG while it indexes, torch's
``TracerWarning`` while an encoder is exported, onnxruntime's advice on quantization, Hugging Face
on model loading, Ray at start-up). :func:`quiet_libraries` keeps all of that off stderr: their
loggers at ERROR, their warnings ignored, the C++ runtimes'
start-up chatter at error level. With ``-v`` nothing is silenced and library loggers print at INFO.
The choice is kept in ``MUSTCITE_VERBOSE`` for the worker processes a server starts. The command
line and the server call this; the library itself never changes the caller's logging.
"""

from __future__ import annotations

import logging
import os
import warnings

#: loggers of the libraries mustcite calls (their children included)
LIBRARY_LOGGERS = ("bm25s", "onnxruntime", "sentence_transformers", "transformers", "huggingface_hub", "torch",
                   "faiss", "ray", "httpx", "httpcore", "urllib3", "filelock", "pylate", "datasets", "numexpr",
                   "pdfminer", "PIL", "multipart", "asyncio")

#: environment the libraries read when they are first imported
_QUIET_ENV = {"TRANSFORMERS_VERBOSITY": "error", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
              "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TOKENIZERS_PARALLELISM": "false", "TF_CPP_MIN_LOG_LEVEL": "3",
              "RAY_DEDUP_LOGS": "1"}


def quiet_libraries(verbose: bool = False) -> None:
    """Keep library logs and warnings off stderr (``verbose``: show them, library logs at INFO)."""
    if verbose:
        os.environ["MUSTCITE_VERBOSE"] = "1"
        logging.basicConfig(level=logging.INFO, format="%(levelname)s:%(name)s: %(message)s")
        return
    for name, value in _QUIET_ENV.items():
        os.environ.setdefault(name, value)     # for worker processes and libraries not imported yet
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(logging.ERROR)
        # a library may set its own level when it is imported later (bm25s sets DEBUG): the filter stays
        if _errors_only not in logger.filters:
            logger.addFilter(_errors_only)
    # libraries that log on the root logger (onnxruntime's quantization advice): errors only there,
    # while mustcite's own loggers keep their warnings
    logging.getLogger().setLevel(logging.ERROR)
    logging.getLogger("mustcite").setLevel(logging.WARNING)
    # every warning, also a library's warning raised at a line of mustcite (torch's deprecation
    # notices name the caller): mustcite tells the user what matters in its own lines
    warnings.filterwarnings("ignore")


def _errors_only(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.ERROR


def verbose_requested() -> bool:
    """Whether ``-v`` was given to the command that started this process."""
    return os.environ.get("MUSTCITE_VERBOSE") == "1"
