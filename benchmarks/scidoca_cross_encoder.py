"""Train the SCIDOCA paragraph-candidate cross-encoder (``mustcite.scidoca.cross``) from the
shipped MiniLM weights, as used by the Task 1 figures, and measure on dev whether it tells a
paragraph's cited candidates from BM25's hardest others.

Training: a seeded sample of training paragraphs (train split only), one epoch, listwise by
default (each gold candidate with 7 non-gold ones, 5 of them among BM25's 10 highest; localized
contrastive loss) on the segment-cosine head (``--head classifier``: a new layer on [CLS]) or
``--objective pointwise`` (the earlier recipe: gold, BM25's hardest non-gold
and a random one as pairs, binary cross-entropy).

Dev check (a seeded sample of dev, never test): for each paragraph the ``--top`` candidates BM25
ranks highest are scored by the cross-encoder; reported are the AUC of cited vs not cited among
them (pooled, and averaged over paragraphs with both), and how often the best-scored one is cited,
for the cross-encoder and for BM25's own scores on the same candidates. Writes the model to
``--out`` and the figures to ``benchmarks/results/scidoca_cross_encoder[<suffix>].json``.

    python benchmarks/scidoca_cross_encoder.py [--paragraphs 1400] [--objective listwise]
        [--head segment-cosine] [--dev 400] [--out DIR] [--suffix NAME]
    python benchmarks/scidoca_cross_encoder.py --evaluate DIR     # the dev check of a saved model
    python benchmarks/scidoca_cross_encoder.py --untrained [--head H] [--bi-encoder-length 96]

Then ``python benchmarks/scidoca_systems.py --task 1 --dense --cross-encoder DIR`` chooses its
weight on dev. (``mustcite scidoca train --task 1 --train-cross-encoder N`` trains one the same
way on paragraphs other than stage 1's.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from common import bi_encoder_scores, scidoca_dev_check  # noqa: E402

from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.retrieval import HEADS, peak_rss_mb  # noqa: E402
from mustcite.scidoca import sample_examples, split_file, train_cross_encoder  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def main(argv: list[str] | None = None) -> int:
    from mustcite.config import Workspace
    from mustcite.retrieval import CrossEncoderReranker

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="SCIDOCA task data (default: <work>/scidoca)")
    ap.add_argument("--paragraphs", type=int, default=1400)
    ap.add_argument("--objective", choices=("listwise", "pointwise"), default="listwise")
    ap.add_argument("--head", choices=HEADS, default="segment-cosine")
    ap.add_argument("--max-length", type=int, default=192)
    ap.add_argument("--sample-seed", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0, help="training seed")
    ap.add_argument("--dev", type=int, default=400, help="dev paragraphs for the check (0: none)")
    ap.add_argument("--top", type=int, default=8, help="BM25 candidates per dev paragraph in the check")
    ap.add_argument("--out", type=Path, help="model folder (default: <work>/models/scidoca-cross)")
    ap.add_argument("--evaluate", type=Path, help="only the dev check of the model saved here")
    ap.add_argument("--untrained", action="store_true", help="only the dev check of a new --head, untrained")
    ap.add_argument("--bi-encoder-length", type=int, default=0,
                    help="also check the untrained MiniLM bi-encoder, each text cut to this many tokens")
    ap.add_argument("--suffix", default="")
    args = ap.parse_args(argv)
    work = Workspace.resolve().root
    data = args.data or work / "scidoca"
    if args.evaluate:
        ce = CrossEncoderReranker.load(args.evaluate)
        report: dict = {"model": str(args.evaluate), "cross_encoder": dict(ce.info)}
    elif args.untrained:
        ce = CrossEncoderReranker.new(max_length=args.max_length, seed=args.seed, head=args.head)
        report = {"model": "untrained", "cross_encoder": dict(ce.info)}
    else:
        t0 = time.perf_counter()
        examples = sample_examples(split_file(data, "train", 1), args.paragraphs, seed=args.sample_seed, task=1)
        ce = train_cross_encoder(examples, seed=args.seed, objective=args.objective, max_length=args.max_length,
                                 head=args.head)
        ce.info.update({"fit_s": round(time.perf_counter() - t0, 1), "train_peak_rss_mb": peak_rss_mb()})
        out = args.out or work / "models" / "scidoca-cross"
        ce.save(out)
        report = {"model": str(out), "cross_encoder": dict(ce.info)}
        print(json.dumps(ce.info))
    if args.dev:
        scorers = {"cross_encoder": lambda pairs: ce.score(pairs, batch_size=32, progress=True)}
        if args.bi_encoder_length:
            scorers[f"minilm_bi_encoder_{args.bi_encoder_length}"] = \
                lambda pairs: bi_encoder_scores(pairs, args.bi_encoder_length)
        dev_examples = sample_examples(split_file(data, "dev", 1), args.dev, seed=0, task=1)
        report["dev"] = scidoca_dev_check(scorers, dev_examples, args.top)
        print(json.dumps(report["dev"], indent=1))
    atomic_write_json(RESULTS / f"scidoca_cross_encoder{args.suffix}.json", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
