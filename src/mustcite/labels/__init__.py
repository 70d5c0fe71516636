"""Must-cite labels (MasterSet Section 4): the judge interface, the three label tiers,
the offline judge, MultiCite evaluation and inter-rater agreement."""

from mustcite.labels.judge import (
    CitationInstance,
    Judge,
    Judgement,
    instance_from_reference,
    instances_from_reference_file,
)

from ..lazy_exports import lazy_exports

#: public name -> the submodule that defines it ("submodule:name" where it is named otherwise
#: there), imported on first use so that ``import mustcite.labels`` stays cheap
_LAZY = {
    # the judges
    "OfflineJudge": "offline",
    "load_offline_model": "offline:load_model",
    "NeuralJudge": "neural",
    "ONNX_DIR": "neural",
    "ONNX_FILE": "neural",
    "neural_model_dir": "neural:default_model_dir",
    "CascadeJudge": "cascade",
    "CASCADE_FILE": "cascade:FILE",
    "OpenAICompatJudge": "backends.openai_compat",
    "GeminiJudge": "backends.gemini",
    "LocalLlamaJudge": "backends.local_llama",
    "GGUF_NAME": "backends.local_llama",
    "LOCAL_CALIBRATION_FILE": "backends.local_llama:CALIBRATION_FILE",
    "calibrate_threshold": "backends.local_llama",
    "local_models_dir": "backends.local_llama:default_models_dir",
    "xllamacpp_available": "backends.local_llama",
    "load_prompt": "prompting",
    # running judges: concurrency, retries, the cache
    "run_judge": "judging:run",
    "cache_key": "judging",
    "JudgeCache": "cache",
    # labelling papers, and the labelled papers
    "SUMMARY_NAME": "annotate",
    "annotate_dir": "annotate",
    "TIERS": "papers",
    "load_reference_dir": "papers",
    "load_reference_dirs": "papers",
    # MultiCite evaluation, rating samples, plots
    "evaluate_judge": "multicite",
    "iter_instances": "multicite",
    "load_split": "multicite",
    "type1_proxy": "multicite",
    "RatingStore": "rating",
    "write_sample": "sample",
    "label_counts": "plots",
    "plot_counts": "plots",
}

__all__ = ["CitationInstance", "Judge", "Judgement", "instance_from_reference",
           "instances_from_reference_file", *_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
