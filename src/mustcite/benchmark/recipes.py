"""Benchmark recipes: which papers form the pool, which are queries, how labels become ground truths.

* ``masterset-coreml-v1`` (MasterSet paper, Section 6.2): target venues NeurIPS/ICML/ICLR; core set =
  target-venue papers plus the other-venue papers they cite; pool = core-set papers of 2018-2024;
  queries = target-venue papers of 2025 with at least one must-cite paper in the pool.
* ``neurips-2024-v2`` (the default, also called ``neurips-2024``; the real-data benchmark of
  shared/data/README.md): queries = the NeurIPS
  2024 papers with full texts (title and abstract from the full text itself), pool = core-set papers
  of 2018-2023, where the core set is built without the held-out queries (``pool_rule``
  ``"no-heldout"``): target-venue papers plus the papers cited by the labelled papers of earlier
  years and by the *train* queries. Queries are split by a hash of their id, and a query whose
  full text lost a page in OCR (its reference list may be incomplete) is a train query only.
* ``neurips-2024-v3``: v2 plus the cited works outside the corpus (``works``): the pool also
  holds the works that earlier-year labelled papers and train queries cite, and qrels count every
  reference that resolves to a pool paper or work.
* ``neurips-2024-v1``: the first version, kept for comparison: the core set also takes the papers
  that dev and test queries cite (``pool_rule`` ``"all-citing"``), queries are split by a seeded
  shuffle, and every full text may be a dev or test query.

Ground truths: ``type1`` (y_I = 1), ``type2`` (y_II >= 4), ``type3`` (>= 3 mentions), ``mustcite``
(any of the three, Section 6.1) and ``cited`` (any linked reference in the pool).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import UsageError

GROUND_TRUTHS: tuple[str, ...] = ("type1", "type2", "type3", "mustcite", "cited")
SPLITS: tuple[str, ...] = ("train", "dev", "test")


@dataclass(frozen=True)
class Recipe:
    name: str
    version: str
    description: str
    target_venues: tuple[str, ...] = ("NeurIPS", "ICML", "ICLR")
    pool_years: tuple[int, int] = (2018, 2024)           # inclusive
    query_year: int = 2025
    #: "refs": queries are the citing papers of the reference folder (title/abstract from their
    #: metadata sidecar, i.e. the full text); "corpus": title/abstract from the corpus record.
    query_text: str = "corpus"
    split_fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)
    seed: int = 13
    type2_min: int = 4
    type3_min_mentions: int = 3
    min_link_score: float = 0.0
    #: "all-citing": the core set takes what any target-venue citing paper cites (MasterSet, v1);
    #: "no-heldout": only what citing papers before the query year and train queries cite (v2)
    pool_rule: str = "all-citing"
    #: "shuffle": seeded shuffle of the query ids (v1); "hash": each query by a seeded hash of its
    #: id, so a paper's split never depends on which other papers are there (v2)
    split_rule: str = "shuffle"
    #: dev/test queries only from full texts that lost no page in OCR (others are train queries)
    heldout_needs_whole_text: bool = False
    #: the pool also holds the catalogue's cited works (``mustcite works build``) that earlier-year
    #: labelled papers or train queries cite, and qrels count them (v3)
    works: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


RECIPES: dict[str, Recipe] = {
    "masterset-coreml-v1": Recipe(
        name="masterset-coreml-v1", version="v1",
        description="MasterSet-CoreML-v1: NeurIPS/ICML/ICLR core set, pool 2018-2024, queries 2025",
        pool_years=(2018, 2024), query_year=2025, query_text="corpus"),
    "neurips-2024-v2": Recipe(
        name="neurips-2024-v2", version="v2",
        description="NeurIPS 2024 full-text queries against the 2018-2023 core-set pool, built without "
                    "the held-out queries",
        pool_years=(2018, 2023), query_year=2024, query_text="refs",
        pool_rule="no-heldout", split_rule="hash", heldout_needs_whole_text=True,
        notes=("queries are the NeurIPS 2024 papers of the reference folders; their title and abstract "
               "come from the full text's own Abstract section (the 2024 paper lists have no abstracts)",
               "pool: NeurIPS/ICML/ICLR papers of 2018-2023 plus every 2018-2023 corpus paper cited by a "
               "labelled paper of an earlier year than the queries or by a train query; what a dev or test "
               "query cites never decides what is in the pool",
               "split: a query's split comes from a seeded hash of its paper id (60/20/20), independent of "
               "the other papers; a full text with any page that OCR failed on ([MISSING_PAGE_FAIL]) is a "
               "train query only, since its reference list or citation contexts may be incomplete",
               "dev and test queries may use train queries of the same year as labelled neighbours")),
    "neurips-2024-v3": Recipe(
        name="neurips-2024-v3", version="v3",
        description="NeurIPS 2024 full-text queries against the v2 pool plus the cited works outside the corpus "
                    "that earlier-year labelled papers and train queries cite",
        pool_years=(2018, 2023), query_year=2024, query_text="refs",
        pool_rule="no-heldout", split_rule="hash", heldout_needs_whole_text=True, works=True,
        notes=("pool: v2's papers plus every work of the catalogue of cited works (arXiv-only papers, older "
               "or non-member venues, journals, datasets, software, books) cited by a labelled paper of an "
               "earlier year than the queries or by a train query; a work's pool year is the later of its "
               "own year and the year of the first such paper, so no query sees a work before a paper "
               "of its year or earlier introduced it",
               "qrels: every reference of a query that resolves to a pool paper or a pool work",
               "the manifest's coverage says how many of the test queries' reference entries and must-cite "
               "references the pool can hold, with and without the works",
               "queries, splits and the corpus part of the pool are v2's")),
    "neurips-2024-v1": Recipe(
        name="neurips-2024-v1", version="v1",
        description="NeurIPS 2024 full-text queries against the 2018-2023 core-set pool (first version: "
                    "the core set includes what dev/test queries cite)",
        pool_years=(2018, 2023), query_year=2024, query_text="refs",
        notes=("kept for comparison with v2; build it from neurips/fulltext_2024 and fulltext_2023 only "
               "to reproduce the first published figures",)),
}
#: the recipe a benchmark command uses when none is named
DEFAULT_RECIPE = "neurips-2024-v2"
#: other names of a recipe: ``neurips-2024`` is the current version of the NeurIPS 2024 benchmark
#: (and the folder name of benchmarks built before each version carried its number)
ALIASES = {"neurips-2024": "neurips-2024-v2"}
POOL_RULES = ("all-citing", "no-heldout")
SPLIT_RULES = ("shuffle", "hash")


def benchmark_folder(benchmarks: Path, name: str) -> Path:
    """The folder of the built benchmark ``name`` (a recipe or an alias) under ``benchmarks``
    (``<work>/benchmarks``): its recipe's folder, or, when only that exists, the folder an earlier
    build gave it under an alias."""
    canonical = ALIASES.get(name, name)
    for candidate in [canonical, *(a for a, c in ALIASES.items() if c == canonical)]:
        if (benchmarks / candidate).is_dir():
            return benchmarks / candidate
    return benchmarks / canonical


def get_recipe(name: str, **overrides: Any) -> Recipe:
    """A recipe by name (or alias), with optional field overrides (``pool_years=(2019, 2023)``,
    ``seed=1``...)."""
    name = ALIASES.get(name, name)
    if name not in RECIPES:
        raise UsageError(f"unknown recipe {name!r}", hint=f"use one of {', '.join(RECIPES)}")
    recipe = RECIPES[name]
    overrides = {k: v for k, v in overrides.items() if v is not None}
    unknown = set(overrides) - set(recipe.__dataclass_fields__)
    if unknown:
        raise UsageError(f"unknown recipe option(s): {', '.join(sorted(unknown))}")
    recipe = replace(recipe, **overrides)
    if abs(sum(recipe.split_fractions) - 1.0) > 1e-9 or min(recipe.split_fractions) < 0:
        raise UsageError("split fractions must be non-negative and sum to 1")
    if recipe.pool_rule not in POOL_RULES or recipe.split_rule not in SPLIT_RULES:
        raise UsageError(f"pool_rule must be one of {', '.join(POOL_RULES)} and split_rule one of "
                         f"{', '.join(SPLIT_RULES)}")
    if recipe.pool_years[0] > recipe.pool_years[1]:
        raise UsageError("pool_years must be (first, last)")
    return recipe
