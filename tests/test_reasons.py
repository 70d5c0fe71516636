"""Reasons in words: the neighbours' evidence as sentences, baselines said as such."""

from mustcite.recommend.reasons import reasons, tier_name


def test_neighbours_using_it_as_a_baseline_are_said_first_among_neighbour_evidence():
    ev = {"neighbours_citing": 5, "neighbours_must_citing": 4, "neighbours_baseline_citing": 3,
          "co_cited_by": 12}
    out = reasons(ev)
    assert out[0] == "Of the papers closest to yours, 3 use it as a baseline or dataset and 5 cite it."
    assert out[-1].startswith("Cited together with")


def test_one_baseline_neighbour_is_weak_evidence_in_the_singular():
    out = reasons({"neighbours_citing": 1, "neighbours_baseline_citing": 1, "described_by": 2})
    assert out == ["Described in words like yours where 2 papers cite it.",
                   "Of the papers closest to yours, 1 uses it as a baseline or dataset."]


def test_without_baselines_the_must_cite_count_is_said():
    assert reasons({"neighbours_citing": 3, "neighbours_must_citing": 2}) == \
        ["Of the papers closest to yours, 3 papers cite it, 2 as a must-cite."]


def test_tier_names_are_spelled_out():
    assert [tier_name(t) for t in ("I", "II", "III", "cited", "x")] == \
        ["baseline or dataset", "core", "used throughout", "cited", "x"]
