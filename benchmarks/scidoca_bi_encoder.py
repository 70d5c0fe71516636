"""Fine-tune the SCIDOCA dense encoder (``mustcite.scidoca.bi_encoder``) and check it on dev.

Training (``mustcite scidoca train-encoder``'s recipe, :func:`mustcite.scidoca.training.train_encoder`):
a seeded sample of Task 3 train paragraphs, triplets of (paragraph or citing sentence, cited
candidate, BM25-hard non-cited candidate of the same paragraph), NT-Xent, one epoch, 64 tokens.

Dev check (a seeded sample of dev, never test; the cross-encoder check's function): among BM25's
``--top`` candidates of each paragraph, AUC of cited vs not (pooled and per paragraph) and how
often the best-scored candidate is cited, for the fine-tuned encoder, the shipped MiniLM at the
same length, and BM25. Writes ``benchmarks/results/scidoca_bi_encoder.json``.

    python benchmarks/scidoca_bi_encoder.py [--paragraphs 3000] [--dev 400] [--out DIR]
    python benchmarks/scidoca_bi_encoder.py --evaluate DIR

Then ``python benchmarks/scidoca_systems.py --task 1 --encoder DIR`` trains stage 1 on it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from common import bi_encoder_scores, scidoca_dev_check  # noqa: E402

from mustcite.config import Workspace  # noqa: E402
from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.scidoca import MAX_SEQ_LENGTH, sample_examples, split_file, train_encoder  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="SCIDOCA task data (default: <work>/scidoca)")
    ap.add_argument("--paragraphs", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dev", type=int, default=400, help="dev paragraphs for the check")
    ap.add_argument("--top", type=int, default=8, help="BM25 candidates per dev paragraph in the check")
    ap.add_argument("--out", type=Path, help="model folder (default: <work>/models/scidoca-encoder)")
    ap.add_argument("--evaluate", type=Path, help="only the dev check of the encoder saved here")
    args = ap.parse_args(argv)
    work = Workspace.resolve().root
    data = args.data or work / "scidoca"
    folder = args.evaluate or args.out or work / "models" / "scidoca-encoder"
    report: dict = {"model": str(folder)}
    if not args.evaluate:
        t0 = time.perf_counter()
        card = train_encoder(split_file(data, "train", 3), folder, limit=args.paragraphs, seed=args.seed)
        report["training"] = {**card, "wall_s": round(time.perf_counter() - t0, 1)}
        print(json.dumps({k: card[k] for k in ("pairs", "loss_per_epoch", "seconds")}))
    else:
        report["training"] = json.loads((folder / "training_card.json").read_text(encoding="utf-8"))
    examples = sample_examples(split_file(data, "dev", 1), args.dev, seed=0, task=1)
    scorers = {f"fine_tuned_bi_encoder_{MAX_SEQ_LENGTH}": lambda p: bi_encoder_scores(p, MAX_SEQ_LENGTH, folder),
               f"minilm_bi_encoder_{MAX_SEQ_LENGTH}": lambda p: bi_encoder_scores(p, MAX_SEQ_LENGTH)}
    report["dev"] = scidoca_dev_check(scorers, examples, args.top)
    print(json.dumps(report["dev"], indent=1))
    atomic_write_json(RESULTS / "scidoca_bi_encoder.json", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
