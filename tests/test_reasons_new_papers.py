"""Reasons for papers nobody in the data has cited yet: a paper of the query's year (or the year
before) with no citing paper says it is too recent to be cited, not only that it shares words."""

from mustcite.recommend.reasons import reasons, too_recent, uncited
from mustcite.recommend.results import Ranked, Recommendation, recommendation

RECENT = ("Published in 2025: too recent for any paper in the data to cite it yet; "
          "recommended for its closeness to your title and abstract.")


def no_citers(**extra):
    """The evidence of a result no paper of the model's data cites (as :func:`evidence_for` gives it)."""
    return {"sources": ["dense"], "neighbours": [], "neighbours_citing": 0, "neighbours_must_citing": 0,
            "neighbours_baseline_citing": 0, "labelled_citing": 0, "co_cited_by": 0, "described_by": 0,
            "matched_terms": ["diffusion", "video"], "named": None, **extra}


def result(year, ev):
    return Recommendation("p1", "Video diffusion at scale", year, "NeurIPS", 0.9, "cited", {"cited": 0.9},
                          authors=["Ada Lovelace", "Alan Turing"], evidence=ev)


def test_a_paper_of_the_query_year_or_the_year_before_is_too_recent_to_be_cited():
    ev = no_citers()
    assert reasons(ev, result(2025, ev), 2025) == [RECENT, "It shares your words diffusion, video."]
    assert reasons(ev, result(2025, ev), 2026)[0] == RECENT
    # older: nobody citing it is no news about its age
    assert reasons(ev, result(2024, ev), 2026) == ["It shares your words diffusion, video."]
    # without the query's year, the reasons are what they were
    assert reasons(ev, result(2025, ev)) == ["It shares your words diffusion, video."]


def test_any_citing_paper_in_the_data_keeps_the_usual_reasons():
    for field in ("labelled_citing", "neighbours_citing", "co_cited_by", "described_by", "references_cocited"):
        ev = no_citers(**{field: 1})
        assert not uncited(ev) and RECENT not in reasons(ev, result(2025, ev), 2025), field
    named_by_citers = no_citers(named={"name": "VDM", "support": 3, "from_title": False})
    assert not too_recent(named_by_citers, 2025, 2025)
    # no evidence gathered (evidence off): nothing is claimed
    assert not uncited({}) and reasons({}, result(2025, {}), 2025) == []


def test_its_title_name_in_the_abstract_comes_first_then_its_age():
    ev = no_citers(named={"name": "VDS", "support": 0, "from_title": True}, matched_terms=[])
    assert reasons(ev, result(2025, ev), 2025) == [
        "Your abstract names VDS: the paper of Lovelace et al., NeurIPS 2025.", RECENT]


def test_a_ranked_list_says_it_for_its_year():
    """A result is made before its list knows the query's year; the list says it."""
    ev = no_citers()
    new = recommendation({"paper_id": "p1", "title": "Video diffusion at scale", "year": 2025, "venue": "NeurIPS"},
                         0.9, {"cited": 0.9}, ev)
    cited_ev = no_citers(labelled_citing=4)
    old = recommendation({"paper_id": "p2", "title": "Video diffusion", "year": 2025, "venue": "CVPR"},
                         0.8, {"cited": 0.8}, cited_ev)
    assert new.reasons == ["It shares your words diffusion, video."]
    ranked = Ranked([new, old], 2025)
    assert ranked[0].reasons == [RECENT, "It shares your words diffusion, video."]
    assert ranked[1].reasons == ["It shares your words diffusion, video."]
    assert ranked[0].to_dict()["reasons"][0] == RECENT
