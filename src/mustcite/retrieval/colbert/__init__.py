"""Late interaction (ColBERT) over the shipped MiniLM through PyLate: token embeddings, MaxSim.

Two models, one encoder:

* ``colbert`` (zero-shot): PyLate's ``models.ColBERT`` over MiniLM with an *identity* 384 -> 384
  projection (PyLate would otherwise add an untrained random 384 -> 128 layer), no [Q]/[D] marker
  tokens (they would be new, untrained vocabulary rows) and no [MASK] query expansion: MaxSim over
  MiniLM's own L2-normalised token embeddings. Documents drop PyLate's punctuation skiplist.
* ``colbert:FOLDER`` (ColBERT-NTX, ``mustcite benchmark train-colbert``): the same encoder plus
  a 384 -> 128 PyLate ``Dense`` projection trained with PyLate's ``losses.Contrastive`` (NT-Xent
  over MaxSim scores with in-batch negatives) on the train queries; the folder may also hold a
  fine-tuned transformer (``0_Transformer/``) when trained with ``train_encoder=True``.

Because the projection has no bias, ``normalize(normalize(h) @ W) == normalize(h @ W)``: the
normalised MiniLM token embeddings are encoded ONCE into an on-disk cache (:class:`TokenCache`,
float16, keyed by the transformer's content, the length limits and each text's sha256) and every
projection is applied on the fly. A trained transformer gets its own cache key.

Search, three modes (``mode``):

* ``index``: the pool's token embeddings in PyLate's Voyager HNSW index (``indexes.Voyager``,
  cosine, float32, M=64, ef 200; fast-plaid/PLAID is not installable here), candidate generation
  by token kNN and exact MaxSim re-scoring with ``retrieve.ColBERT`` -- a full-index run;
* ``exact`` (``colbert-exact[:FOLDER]``): exhaustive MaxSim of every query against every pool
  paper (:class:`FlatTokenIndex`: the projected token vectors in one float16 matrix, scored in
  blocks) -- a full-index run with no approximation and no build step beyond the token cache
  (Voyager's HNSW build took 28-82 s per 1,000 papers here at 128-384 dimensions, 0.3-0.9 h for
  the benchmark pool, and its queries 0.4-1.3 s each: ``benchmarks/results/colbert.json``);
* ``rerank``: BM25 top-``rerank_k`` per query re-scored by exact MaxSim (``pylate.rank.rerank``)
  -- a re-ranking run: its recall@K equals BM25's at ``rerank_k``.

PyLate 1.6.0 pins sentence-transformers 5.3; mustcite runs it on sentence-transformers 6 with two
small shims (:func:`.model._patch_pylate`) and builds the model from its modules (PyLate's own
``ColBERT(path)`` loader fails on sentence-transformers 6).

The package, one module a job: :mod:`.model` (PyLate, its shims, the model and its folder),
:mod:`.token_cache` (the token cache and its encoder), :mod:`.maxsim` (MaxSim scoring and the exact
:class:`FlatTokenIndex`), :mod:`.retriever` (:class:`ColbertRetriever` and the method names) and
:mod:`.training` (ColBERT-NTX).
"""

from .maxsim import FlatTokenIndex, maxsim, rerank_candidates
from .model import (
                    COLBERT_CONFIG,
                    DENSE_DIR,
                    PYLATE_HINT,
                    TRANSFORMER_DIR,
                    ColbertModel,
                    ColbertSettings,
                    build_pylate,
                    load_colbert,
                    pylate_version,
                    require_pylate,
                    save_colbert,
                    token_cache_key,
)
from .retriever import METHOD_MODES, MODES, ColbertRetriever, colbert_retriever
from .token_cache import EncodeStats, TokenCache, TokenEncoder, text_key
from .training import ColbertTrainConfig, train_colbert

__all__ = ["COLBERT_CONFIG", "DENSE_DIR", "METHOD_MODES", "MODES", "PYLATE_HINT", "TRANSFORMER_DIR", "ColbertModel",
           "ColbertRetriever", "ColbertSettings", "ColbertTrainConfig", "EncodeStats", "FlatTokenIndex", "TokenCache",
           "TokenEncoder", "build_pylate", "colbert_retriever", "load_colbert", "maxsim", "pylate_version",
           "require_pylate", "rerank_candidates", "save_colbert", "text_key", "token_cache_key", "train_colbert"]
