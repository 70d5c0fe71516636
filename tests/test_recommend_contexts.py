"""Citation-context evidence (recommend/contexts.py) on the real slice of helpers.recommender:
a query finds a pool paper through the words labelled papers use where they cite it, never through
its own contexts (leave-one-out) or those of a later paper (time order)."""

from __future__ import annotations

import copy

import pytest
from helpers import recommender as S

from mustcite.labels.papers import contexts_from_references
from mustcite.recommend.contexts import ContextIndex
from mustcite.retrieval.base import Doc


def _query_of_context(p):
    """A query made of one real citation context of labelled paper ``p`` (its first cited paper)."""
    pid, text = sorted(p.contexts.items())[0]
    return pid, Doc(p.id, "", text)


def test_contexts_come_from_the_reference_file():
    refs = [{"paper_id": "a", "contexts": [{"section": "1", "context": r"We use \(x\) as in [1]."},
                                            {"section": "2", "context": "We use $x$ as in [1]."}]},
            {"paper_id": "b", "contexts": []}, {"paper_id": None, "contexts": [{"context": "z"}]}]
    assert contexts_from_references(refs) == {"a": "We use as in [1]."}
    assert contexts_from_references(refs, {"b"}) == {}


@pytest.mark.data
def test_a_context_finds_its_cited_paper_but_never_its_own_paper():
    lab = [p for p in copy.deepcopy(S.labelled()) if p.contexts]
    index = ContextIndex(lab)
    assert index.size == sum(len(p.contexts) for p in lab)
    p = lab[0]
    pid, q = _query_of_context(p)
    hit = index.search([q])[0]
    assert hit[pid].rank == 1 and hit[pid].best == 1.0 and hit[pid].citers >= 1
    # leave-one-out: without p's own contexts the cited paper is found only through other citers
    loo = index.search([q], exclude=[p.id])[0]
    assert (loo[pid].citers if pid in loo else 0) == hit[pid].citers - 1
    assert all(m.rank >= 1 for m in loo.values())


@pytest.mark.data
def test_contexts_of_later_papers_never_count():
    lab = [p for p in copy.deepcopy(S.labelled()) if p.contexts]
    for i, p in enumerate(lab):
        p.year = 2020 + i % 4                 # 2020..2023
    index = ContextIndex(lab)
    late = next(p for p in lab if p.year == 2023)
    pid, q = _query_of_context(late)
    assert pid in index.search([q], years=[2023])[0]          # the rule is what removes it below
    seen = index.search([q], years=[2021])[0]
    for cited, m in seen.items():
        assert m.citers <= sum(1 for o in lab if o.year <= 2021 and cited in o.contexts)
    assert not any(m.citers > 0 and cited == pid and not any(o.year <= 2021 and pid in o.contexts for o in lab)
                   for cited, m in seen.items())
    unknown = copy.deepcopy(lab)
    for p in unknown:
        p.year = None
    assert ContextIndex(unknown).search([q], years=[2023])[0] == {}   # unknown year: never used
    assert ContextIndex(unknown).search([q])[0]                       # no year given: all are used
