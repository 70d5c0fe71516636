"""Train the SCIDOCA paragraph-candidate cross-encoder (``mustcite.scidoca.cross``) from the
shipped MiniLM weights, as used by the Task 1 figures: a seeded sample of training paragraphs
(train split only), its pairs (gold, BM25's hardest non-gold, a random one), one epoch.

    python benchmarks/scidoca_cross_encoder.py [--paragraphs 1400] [--sample-seed 1] [--out DIR]

About an hour on two CPU cores for 1,400 paragraphs (6,275 pairs, 192 tokens). Then
``python benchmarks/scidoca_systems.py --task 1 --dense --cross-encoder DIR`` chooses its weight
on dev. (``mustcite scidoca train --task 1 --train-cross-encoder N`` trains one the same way on
paragraphs other than stage 1's.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from mustcite.scidoca.cross import train_cross_encoder  # noqa: E402
from mustcite.scidoca.formats import sample_examples  # noqa: E402
from mustcite.scidoca.training import split_file  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    from mustcite.config import Workspace

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="SCIDOCA task data (default: <work>/scidoca)")
    ap.add_argument("--paragraphs", type=int, default=1400)
    ap.add_argument("--sample-seed", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0, help="training seed")
    ap.add_argument("--out", type=Path, help="model folder (default: <work>/models/scidoca-cross)")
    args = ap.parse_args(argv)
    work = Workspace.resolve().root
    t0 = time.perf_counter()
    examples = sample_examples(split_file(args.data or work / "scidoca", "train", 1), args.paragraphs,
                               seed=args.sample_seed, task=1)
    ce = train_cross_encoder(examples, seed=args.seed)
    ce.info["fit_s"] = round(time.perf_counter() - t0, 1)
    ce.save(args.out or work / "models" / "scidoca-cross")
    print(json.dumps(ce.info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
