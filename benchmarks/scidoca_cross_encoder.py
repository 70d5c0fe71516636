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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from mustcite.io import atomic_write_json  # noqa: E402
from mustcite.retrieval.base import peak_rss_mb  # noqa: E402
from mustcite.retrieval.cross_encoder import HEADS  # noqa: E402
from mustcite.scidoca.cross import candidate_text, gold_ids, paragraph_text, train_cross_encoder  # noqa: E402
from mustcite.scidoca.floors import BM25TopK  # noqa: E402
from mustcite.scidoca.formats import Example, sample_examples  # noqa: E402
from mustcite.scidoca.training import split_file  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def auc(pos: np.ndarray, neg: np.ndarray) -> float | None:
    """P(a cited candidate scores above a non-cited one), ties half."""
    if not len(pos) or not len(neg):
        return None
    diff = pos[:, None] - neg[None, :]
    return float((diff > 0).mean() + 0.5 * (diff == 0).mean())


def bi_encoder_scores(pairs: list[tuple[str, str]], max_length: int, model_path: str | Path | None = None) -> np.ndarray:
    """A bi-encoder's cosine with each text encoded alone, cut to ``max_length`` tokens: the shipped
    MiniLM (the one the heads start from) or a fine-tuned folder."""
    from sentence_transformers import SentenceTransformer

    from mustcite.retrieval.dense import default_model_path

    model = SentenceTransformer(str(model_path or default_model_path()), device="cpu")
    model.max_seq_length = max_length
    texts = sorted({t for pair in pairs for t in pair})
    vecs = model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=True)
    at = {t: i for i, t in enumerate(texts)}
    return np.array([float(vecs[at[a]] @ vecs[at[b]]) for a, b in pairs])


def dev_check(scorers: dict, examples: list[Example], top: int) -> dict:
    """AUC and top-1 precision of each scorer (name -> function of ``(paragraph, candidate text)``
    pairs returning scores) and of BM25, among BM25's ``top`` candidates of each paragraph."""
    plain = [Example(e.id, 1, paragraph_text(e), e.candidates, gold_ids(e)) for e in examples]
    bm25 = BM25TopK(1).score(plain)
    heads = [np.argsort(-s, kind="stable")[:top] for s in bm25]
    pairs = [(ex.text, candidate_text(ex.candidates[i])) for ex, h in zip(plain, heads) for i in h]
    cuts = np.cumsum([len(h) for h in heads])[:-1]
    out: dict = {"paragraphs": len(plain), "top": top, "pairs": len(pairs)}
    rows = []
    for name, score in scorers.items():
        t0 = time.perf_counter()
        rows.append((name, np.split(np.asarray(score(pairs)), cuts), round(len(pairs) / (time.perf_counter() - t0), 1)))
    rows.append(("bm25", [s[h] for s, h in zip(bm25, heads)], None))
    cited = [np.array([ex.candidates[i].id in gold for i in h])
             for ex, h in zip(plain, heads) for gold in [set(ex.gold)]]
    for name, per, rate in rows:
        pos, neg, paras, hit = [], [], [], []
        for y, sc in zip(cited, per):
            pos.append(sc[y])
            neg.append(sc[~y])
            if y.any() and (~y).any():
                paras.append(auc(sc[y], sc[~y]))
                hit.append(float(y[int(np.argmax(sc))]))
        pooled = auc(np.concatenate(pos), np.concatenate(neg))
        out[name] = {"auc_pooled": round(pooled, 4), "auc_per_paragraph": round(float(np.mean(paras)), 4),
                     "top1_cited": round(float(np.mean(hit)), 4), "paragraphs_with_both": len(paras),
                     **({"score_pairs_per_s": rate} if rate is not None else {})}
    return out


def main(argv: list[str] | None = None) -> int:
    from mustcite.config import Workspace
    from mustcite.recommend.crossencoder import CrossEncoderReranker

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
        report["dev"] = dev_check(scorers, sample_examples(split_file(data, "dev", 1), args.dev, seed=0, task=1), args.top)
        print(json.dumps(report["dev"], indent=1))
    atomic_write_json(RESULTS / f"scidoca_cross_encoder{args.suffix}.json", report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
