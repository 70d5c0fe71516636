"""scripts/gpu_encode.py on CPU with a 200-paper real slice: its output is a cache the dense retriever hits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import real_slice

from mustcite.retrieval.dense import DenseRetriever

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu_encode.py"


@pytest.mark.slow
@pytest.mark.data
def test_gpu_encode_writes_the_cache_format(tmp_path):
    rows = real_slice(5000)[::25]                     # 200 papers, four venues
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "pool.parquet")
    out = tmp_path / "emb-out"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--pool", str(tmp_path / "pool.parquet"), "--out", str(out),
                           "--device", "cpu", "--batch-size", "64", "--limit", "200",
                           "--export", str(tmp_path / "part0"), "--part", "0"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads((out / "gpu_encode.json").read_text())
    m = report["models"][0]
    assert (report["docs"], m["docs"], m["encoded"], m["model"]) == (200, 200, 200, "all-MiniLM-L6-v2")
    assert m["docs_per_s"] > 0
    assert sorted(p.name for p in (tmp_path / "part0").iterdir()) == ["gpu_encode.json", "info.json", "shard-00000.npy"]
    cache = tmp_path / "local-cache"                  # a local cache that already holds a shard of its own
    DenseRetriever(cache_dir=cache).index(rows[:2] + [{"paper_id": "x", "title": "a query-like text", "abstract": ""}])
    imp = subprocess.run([sys.executable, str(SCRIPT), "--import-from", str(tmp_path / "part0"), "--out", str(cache)],
                         capture_output=True, text=True, timeout=300)
    assert imp.returncode == 0, imp.stderr[-2000:]
    assert json.loads(imp.stdout.splitlines()[-1]) == {"shards": 1, "rows": 198}
    r = DenseRetriever(cache_dir=cache)               # same key, same texts: nothing to encode
    assert r.key == m["key"]
    r.index(rows)
    assert r.cache.encoded_last == 0 and r._model is None
    res = r.search([{"id": "q", "title": rows[7]["title"], "abstract": ""}], k=1)
    assert r.cache.encoded_last == 1
    assert res["q"][0][0] == rows[7]["paper_id"]
