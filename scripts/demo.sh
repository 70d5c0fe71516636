#!/usr/bin/env bash
# `make demo`: the main job end to end on the real data in ../shared/data.
#   corpus -> extract + link -> labels (offline judge; MUSTCITE_JUDGE=cascade|neural for the others)
#   -> neurips-2024-v2 benchmark -> BM25 baseline -> recommender (train, recommend, audit of a real draft)
# Every step caches its output: a rerun skips what is already done.
set -euo pipefail
cd "$(dirname "$0")/.."
MC=".venv/bin/mustcite"
WORK="${MUSTCITE_WORK:-$PWD/mustcite-work}"
export MUSTCITE_WORK="$WORK"
DATA="$(.venv/bin/python -c 'from mustcite.config import find_data_dir; print(find_data_dir())')"
EXTRACT="$WORK/extract"
BBL="$WORK/extract-cs768"
BENCH="$WORK/benchmarks/neurips-2024-v2"
JUDGE="${MUSTCITE_JUDGE:-offline}"
step() { printf '\n\033[1m== %s\033[0m  (%d s so far)\n' "$*" "$((SECONDS - t0))"; }
t0=$SECONDS

step "1/7 corpus: import the proceedings lists and ML Anthology, merge them record by record"
# (rebuilt when a store of an older build lacks the version links and the side records of ML Anthology)
if [ -f "$WORK/corpus/papers.parquet" ] && [ -f "$WORK/corpus/versions.parquet" ]; then
  echo "corpus already built: $WORK/corpus/papers.parquet"
else $MC corpus build -q; fi
$MC corpus stats

step "2/7 extract references, contexts and mention counts from the NeurIPS 2024 + 2023 full texts"
# every full-text folder; papers that lost a page in OCR are flagged (they are never held-out queries)
$MC extract "$DATA/neurips/fulltext_2024" "$DATA/neurips/fulltext_2023" "$DATA/neurips/fulltext_2023_rest" \
  "$DATA/neurips/fulltext_2024_partial" --out "$EXTRACT"

step "3/7 link every reference to the corpus"
$MC link "$EXTRACT"
# the reference lists of 6,506 more NeurIPS/ICML papers (arXiv 2015-2024) from their .bbl files, without
# citation contexts ("cited" evidence only): each citing paper with its corpus record and year, each reference
# linked to the corpus under time order; a paper that is one of the full texts above or a held-out benchmark
# query goes to excluded/ (skipped when the input, the corpus and the excluded papers are unchanged)
if [ -f "$DATA/citations_cs768/papers.jsonl.xz" ]; then
  $MC extract-bibliographies "$DATA/citations_cs768/papers.jsonl.xz" --out "$BBL"
fi

step "4/7 must-cite labels ($JUDGE judge: Type I, Type II; Type III from mention counts)"
if [ "$JUDGE" = cascade ] || [ "$JUDGE" = neural ]; then
  # the neural judge is built here from the shipped MiniLM weights (about 25 minutes), once
  [ -f "$WORK/models/judge-neural/judge_card.json" ] || $MC labels train-judge --onnx
  [ "$JUDGE" = neural ] || [ -f "$WORK/models/judge-neural/cascade.json" ] || $MC labels fit-cascade
  export MUSTCITE_NEURAL_RUNTIME=onnx-int8
fi
$MC annotate "$EXTRACT" --backend "$JUDGE"
$MC labels stats "$EXTRACT/labels" --out "$WORK/figures/label_distributions.png"
# the catalogue of cited works: every reference that links to no corpus paper, one record per work,
# and the names citing papers give corpus papers and works ("CIFAR-10 [23]")
# (the .bbl reference lists add cited works, not names: names come from citation contexts)
BBL_DIRS=(); [ -d "$BBL" ] && BBL_DIRS=("$BBL")
if [ "$WORK/corpus/works.json" -nt "$EXTRACT/labels_summary.json" ] && \
   { [ ! -f "$BBL/summary.json" ] || [ "$WORK/corpus/works.json" -nt "$BBL/summary.json" ]; }; then
  echo "catalogue of cited works up to date: $WORK/corpus/works.parquet"
else $MC works build "$EXTRACT" "${BBL_DIRS[@]}"; fi
# the consensus of citing papers for check-refs, its Python API and the language server (how 6,506
# papers' reference lists cite each title; about a minute of CPU on 2 cores); skipped when built from
# the same file
$MC works consensus "$DATA/citations_cs768/papers.jsonl.xz"

step "5/7 benchmark neurips-2024-v2 (queries NeurIPS 2024, pool 2018-2023) and the BM25 baseline on test"
# rebuilt when missing, of an older recipe, or built on labels of another judge
.venv/bin/python - "$BENCH/manifest.json" "$EXTRACT/labels_summary.json" <<'PY' || $MC benchmark build --recipe neurips-2024-v2 --refs "$EXTRACT"
import json, sys
from pathlib import Path
m, labels = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
sys.exit(not (m.exists() and json.loads(m.read_text()).get("version") == "v2"
              and json.loads(m.read_text())["labels"]["version"] == labels["judge"]))
PY
$MC benchmark run --method bm25 --split test

step "6/7 train the recommender on every labelled paper, then recommend for a real NeurIPS 2024 paper"
# the full method (BM25 + int8 MiniLM + labelled-neighbour votes + co-citation + citation contexts +
# tier models) over the whole corpus, into models/recommender, which recommend/audit/serve use by
# default. Retrained when missing or saved by an older version of the method. To fit 20 minutes on
# 2 cores: MiniLM runs as int8 ONNX, one single-threaded encoder per CPU, on the first 48 tokens of
# title + abstract (64 by default); the training rows and the hold-out's rankings are computed on one
# forked worker per CPU (the same rows and scores as in one process); the tier models are fit on
# 1,500 of the labelled papers (every
# labelled paper still votes as a neighbour) with half of their negative rows; --no-refit keeps the
# model fit without its 10% hold-out (the hold-out scores the card) instead of fitting it again on
# all. What these settings cost: docs/experiments/recommender.md. The light model (no dense
# encoder): mustcite train --no-dense --out models/recommender-light
# (and retrained when the labels now come from another judge than the one it learned from, or when
# the catalogue of cited works is new: the pool then also holds the works two or more papers cite)
.venv/bin/python - "$WORK/models/recommender" "$EXTRACT/labels_summary.json" <<'PY' || { $MC train --no-refit --fit-queries 1500 --negatives 0.5 --max-tokens 48 && cp "$EXTRACT/labels_summary.json" "$WORK/models/recommender/labels_summary.json"; }
import json, sys
from pathlib import Path
from mustcite.recommend.method import FORMAT_VERSION
model, labels = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
config, learned = model / "config.json", model / "labels_summary.json"
judge = json.loads(learned.read_text())["judge"] if learned.exists() else "offline-lr-v1"  # older demos: offline
card = json.loads((model / "card.json").read_text()) if (model / "card.json").exists() else {}
catalogue = (model.parent.parent / "corpus" / "works.parquet").exists()
sys.exit(not (config.exists() and json.loads(config.read_text())["format"] == FORMAT_VERSION
              and judge == labels["judge"] and bool(card.get("data", {}).get("works")) == catalogue))
PY
$MC recommend --title "VASA-1: Lifelike Audio-Driven Talking Faces Generated in Real Time" \
  --abstract "We introduce VASA, a framework for generating lifelike talking faces with appealing visual affective skills given a single static image and a speech audio clip." \
  --year 2024 --top 10   # a NeurIPS 2024 paper: only papers of 2024 or earlier

step "7/7 audit a real draft's bibliography (what must-cite papers does it lack?)"
$MC audit "$DATA/neurips/fulltext_2024/5zSCSE0k41.md.gz" --year 2024 --top 10

step "done in $((SECONDS - t0)) s"
cat <<EOT
Results are under $WORK:
  corpus store        $WORK/corpus/papers.parquet   (build report: corpus/build.json)
  cited works         $WORK/corpus/works.parquet, work_citations.parquet, names.parquet   (figures: corpus/works.json)
  extraction          $EXTRACT/<paper>.json, summary.json
  .bbl reference lists $BBL/<arXiv id>.json, summary.json   (excluded/: full-text duplicates, held-out queries)
  labels              $EXTRACT/labels/<paper>.json, $EXTRACT/labels_summary.json
  label figure        $WORK/figures/label_distributions.png
  benchmark           $BENCH/ (manifest.json, qrels/, queries/, runs/)
  recommender         $WORK/models/recommender/ (card.json: data, features, hold-out metrics)
Next: .venv/bin/mustcite recommend --queries FILE.jsonl --format json   (or: .venv/bin/mustcite serve --port 8000)
EOT
