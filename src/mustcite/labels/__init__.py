"""Must-cite labels (MasterSet Section 4): the judge interface, the three label tiers,
the offline judge, MultiCite evaluation and inter-rater agreement."""

from mustcite.labels.judge import (
                                   CitationInstance,
                                   Judge,
                                   Judgement,
                                   instance_from_reference,
                                   instances_from_reference_file,
)

__all__ = ["CitationInstance", "Judge", "Judgement", "instance_from_reference",
           "instances_from_reference_file"]
