"""A cross-encoder head that starts where the bi-encoder is: the segment cosine.

The pair ``[CLS] query [SEP] candidate [SEP]`` goes through MiniLM in one pass (every token attends
to both texts, as in any cross-encoder); the logit is ``scale * cos(mean of the query's tokens,
mean of the candidate's tokens) + bias``. With the shipped all-MiniLM-L6-v2 weights, which were
trained for mean-pooled cosine, this scores pairs sensibly before any training (AUC 0.68 among
BM25's top 8 SCIDOCA dev candidates, against 0.55 for a fresh one-logit head after 380 training
groups), so fine-tuning on the few thousand pairs a CPU affords improves a ranker instead of
building one from nothing. The head has two numbers (``classifier.scale``, ``classifier.bias``).

With ``blocked_layers`` N > 0 (the ``late-cross`` head: N = 4 of MiniLM's 6 layers) attention stays
inside each text in the first N layers, each text with its own [CLS] and positions, and crosses
between the texts only above them (with all 6 blocked it is exactly the bi-encoder: each text
encoded alone, then cosine). Untrained it ranks a little better than the joint pass (SCIDOCA dev
AUC 0.71 vs 0.68; re-ranking BM25's top 50, combined MAP 0.096 vs 0.088); trained listwise on the
same groups it did no better (0.098 vs 0.104).

:class:`SegmentCosinePairModel` offers the part of sentence-transformers' ``CrossEncoder`` that
:class:`.cross_encoder.CrossEncoderReranker` uses (``model``, ``tokenizer``, ``max_seq_length``,
``predict``, ``save``), so training, scoring and saving are shared.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from .. import lazy_libs
from ..io import read_json

HEAD_FILE = "segment_cosine_head.json"
#: the initial scale of the cosine (a softmax temperature of 0.05)
INITIAL_SCALE = 20.0


def _module(encoder: Any, scale: float, bias: float, blocked: int, cls_id: int):
    torch = lazy_libs.torch("the segment-cosine head")

    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.tensor(float(scale)))
            self.bias = torch.nn.Parameter(torch.tensor(float(bias)))

    class SegmentCosine(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = encoder
            self.classifier = Head()

        @property
        def base_model(self):
            return self.encoder

        def forward(self, input_ids, attention_mask, token_type_ids):
            if blocked:
                h, attention_mask, token_type_ids = self._late_cross(input_ids, attention_mask, token_type_ids)
            else:
                h = self.encoder(input_ids=input_ids, attention_mask=attention_mask,
                                 token_type_ids=token_type_ids).last_hidden_state
            m = attention_mask.to(h.dtype)
            t = token_type_ids.to(h.dtype)
            mq, md = (m * (1 - t)).unsqueeze(-1), (m * t).unsqueeze(-1)
            q = (h * mq).sum(1) / mq.sum(1).clamp(min=1.0)
            d = (h * md).sum(1) / md.sum(1).clamp(min=1.0)
            cos = torch.nn.functional.cosine_similarity(q, d, dim=-1)
            return SimpleNamespace(logits=self.classifier.scale * cos + self.classifier.bias)

        def _late_cross(self, input_ids, attention_mask, token_type_ids):
            """Token vectors (and the mask and segments they come with) when attention stays
            inside each text in the first ``blocked`` layers and crosses above them. Each text is
            laid out as if encoded alone: the candidate gets its own [CLS] (inserted before it),
            positions restart at that [CLS], token types are all 0."""
            n = input_ids.shape[0]
            start = (token_type_ids == 1).int().argmax(dim=1).tolist()
            cls_col = torch.full((1,), cls_id, dtype=input_ids.dtype, device=input_ids.device)
            one = torch.ones(1, dtype=attention_mask.dtype, device=input_ids.device)

            def insert(t, value, r):
                return torch.cat([t[r, :start[r]], value.to(t.dtype), t[r, start[r]:]])

            ids = torch.stack([insert(input_ids, cls_col, r) for r in range(n)])
            mask = torch.stack([insert(attention_mask, one, r) for r in range(n)])
            seg = torch.stack([insert(token_type_ids, one, r) for r in range(n)])
            length = ids.shape[1]
            idx = torch.arange(length, device=ids.device).expand(n, length)
            first = torch.tensor(start, device=ids.device)[:, None]
            pos = torch.where(seg == 1, idx - first, idx)
            h = self.encoder.embeddings(input_ids=ids, token_type_ids=torch.zeros_like(seg), position_ids=pos)
            keys = mask.bool()[:, None, None, :]
            inside = keys & (seg[:, None, :, None] == seg[:, None, None, :])
            lowest = torch.finfo(h.dtype).min
            masks = [torch.zeros(inside.shape, dtype=h.dtype, device=h.device).masked_fill(~allowed, lowest)
                     for allowed in (inside, keys.expand_as(inside))]
            for i, layer in enumerate(self.encoder.encoder.layer):
                out = layer(h, attention_mask=masks[0] if i < blocked else masks[1])
                h = out[0] if isinstance(out, tuple) else out
            return h, mask, seg

    return SegmentCosine()


class SegmentCosinePairModel:
    """MiniLM + the segment-cosine head; :meth:`from_folder` reads the shipped model or a saved one."""

    def __init__(self, encoder: Any, tokenizer: Any, max_length: int, *, scale: float = INITIAL_SCALE,
                 bias: float = 0.0, blocked_layers: int = 0):
        self.blocked_layers = int(blocked_layers)
        self.model = _module(encoder, scale, bias, self.blocked_layers, tokenizer.cls_token_id)
        self.model.eval()
        self.tokenizer = tokenizer
        self.max_seq_length = int(max_length)

    @classmethod
    def from_folder(cls, folder: str | Path, max_length: int, blocked_layers: int = 0) -> SegmentCosinePairModel:
        transformers = lazy_libs.transformers("the segment-cosine head")
        AutoModel, AutoTokenizer = transformers.AutoModel, transformers.AutoTokenizer
        folder = Path(folder)
        head = read_json(folder / HEAD_FILE, missing_ok=True) or {}
        encoder = AutoModel.from_pretrained(str(folder), local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        return cls(encoder, tokenizer, max_length, scale=head.get("scale", INITIAL_SCALE), bias=head.get("bias", 0.0),
                   blocked_layers=head.get("blocked_layers", blocked_layers))

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32, show_progress_bar: bool = False,
                **_: Any) -> np.ndarray:
        torch = lazy_libs.torch("the segment-cosine head")
        from tqdm.auto import tqdm  # loads asyncio (~15 ms): the recommender imports this module

        out = []
        with torch.inference_mode():
            for i in tqdm(range(0, len(pairs), batch_size), desc="cross-encoder", unit="batch",
                          disable=not show_progress_bar):
                chunk = pairs[i:i + batch_size]
                enc = self.tokenizer([a for a, _ in chunk], [b for _, b in chunk], truncation=True,
                                     max_length=self.max_seq_length, padding=True, return_tensors="pt")
                out.append(self.model(**enc).logits.float().numpy())
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)

    def save(self, folder: str | Path, **_: Any) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.encoder.save_pretrained(str(folder))
        self.tokenizer.save_pretrained(str(folder))
        head = self.model.classifier
        (folder / HEAD_FILE).write_text(json.dumps({"scale": head.scale.detach().item(),
                                                     "bias": head.bias.detach().item(),
                                                     "blocked_layers": self.blocked_layers}))
