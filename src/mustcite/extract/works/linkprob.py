"""Link probability and commonness of the names, as entity linking measures them (Milne and Witten
2008; TagMe), counted over the papers of a mention table (``mentions.parquet``).

Per surface form (a name's key, "imagenet"), over the papers that write it:

* ``link_probability``: the share of those papers that cite a work the name stands for (any version
  of it) anywhere in their reference list; ``link_probability_sentence``: the share that cite it in a
  sentence that writes the name. "ImageNet" and "SQuAD" are high; a word that is also a name
  ("Titan", "Volta", "Workshop") is near 0;
* per work the form stands for, ``cite_share``: the share of the papers writing the form that cite
  that work; ``commonness``: of the papers that put a citation marker right at the form (a *linked
  use*), the share whose marker cites that work. The rest of the linked uses cite something else
  (a later version, a companion, an unrelated paper of the same name).

Counts are of papers, not occurrences: one paper that writes "PyTorch" forty times counts once.
:func:`out_of_fold_stats` gives every train paper the figures of the other folds only, so that a model
learning from them never sees its own paper's citations.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import duckdb
import pyarrow as pa

#: folds of the train papers for :func:`out_of_fold_stats`
FOLDS = 5
#: the strength of the prior (the mean over all forms) in the smoothed shares
PRIOR_PAPERS = 2.0


def arrow_table(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    """Run a query and return a pyarrow Table (``to_arrow_table`` in DuckDB 2, ``arrow`` before)."""
    rel = con.sql(sql)
    fn = getattr(rel, "to_arrow_table", None) or rel.arrow
    return fn()


def fold_of(paper: str, folds: int = FOLDS) -> int:
    """A paper's fold: a stable hash of its id."""
    return int(hashlib.sha256(paper.encode()).hexdigest()[:8], 16) % folds


def paper_uses(con: duckdb.DuckDBPyConnection, table: str | Path, *, split: str = "train") -> pa.Table:
    """One row per (paper, form, work) of the papers of ``split`` in a mention table: whether the
    paper cites the work anywhere, at some sentence that writes the form, and at a marker right at
    it; and whether it puts any marker right at the form."""
    return arrow_table(con, f"""
        select paper, key, target, bool_or(cited_paper) as cited_paper, bool_or(cited_sentence) as cited_sentence,
               bool_or(cited_adjacent) as cited_adjacent, bool_or(markers_adjacent > 0) as linked
        from read_parquet('{table}') where split = '{split}' group by all""")


def form_stats(con: duckdb.DuckDBPyConnection, uses: str) -> pa.Table:
    """Per form (``key``): papers, papers citing a work it names anywhere / in a sentence that writes
    it, papers with a marker right at it, and the link probabilities (``uses``: the name of a table or
    view of :func:`paper_uses` rows)."""
    return arrow_table(con, f"""
        with per_paper as (select paper, key, bool_or(cited_paper) as cp, bool_or(cited_sentence) as cs,
                                  bool_or(linked) as ln from {uses} group by all)
        select key, count(*)::bigint as papers, sum(cp::int)::bigint as cited_papers,
               sum(cs::int)::bigint as cited_sentence_papers, sum(ln::int)::bigint as linked_papers,
               sum(cp::int)::double / count(*) as link_probability,
               sum(cs::int)::double / count(*) as link_probability_sentence
        from per_paper group by key order by papers desc""")


def target_stats(con: duckdb.DuckDBPyConnection, uses: str) -> pa.Table:
    """Per (form, work): papers writing the form, the share citing the work, and its commonness."""
    return arrow_table(con, f"""
        with f as (select key, count(distinct paper) as papers, count(distinct paper) filter (where linked) as linked
                   from {uses} group by key)
        select u.key, u.target, f.papers, sum(u.cited_paper::int)::bigint as cited_papers,
               sum(u.cited_sentence::int)::bigint as cited_sentence_papers,
               sum(u.cited_adjacent::int)::bigint as linked_to_target, f.linked as linked_papers,
               sum(u.cited_paper::int)::double / f.papers as cite_share,
               case when f.linked > 0 then sum(u.cited_adjacent::int)::double / f.linked else null end as commonness
        from {uses} u join f using (key) group by u.key, u.target, f.papers, f.linked""")


def smoothed(k, n, prior: float, strength: float = PRIOR_PAPERS):
    """``(k + strength * prior) / (n + strength)``: a share pulled towards ``prior`` when ``n`` is small."""
    return (k + strength * prior) / (n + strength)


def out_of_fold_stats(con: duckdb.DuckDBPyConnection, table: str | Path, *, folds: int = FOLDS) -> pa.Table:
    """Per (paper, form, work) of the mention table: the link probability, cite share, commonness
    and support (papers writing the form, papers linking it) counted over the train papers, never
    over the paper itself: a train paper gets the figures of the train papers of the other folds; a
    held-out paper those of all train papers. Shares are smoothed towards their means
    (:func:`smoothed`)."""
    papers = [r[0] for r in con.execute(f"select distinct paper from read_parquet('{table}') "
                                        "where split = 'train'").fetchall()]
    con.register("_folds", pa.table({"paper": papers, "fold": [fold_of(p, folds) for p in papers]}))
    con.execute(f"""
        create or replace temp table _uses as
        select m.paper, m.split, m.key, m.target, bool_or(m.cited_paper) as cp, bool_or(m.cited_sentence) as cs,
               bool_or(m.cited_adjacent) as ca, bool_or(m.markers_adjacent > 0) as ln,
               coalesce(any_value(f.fold), -1) as fold
        from read_parquet('{table}') m left join _folds f on f.paper = m.paper and m.split = 'train'
        group by m.paper, m.split, m.key, m.target""").fetchall()
    con.execute("""
        create or replace temp table _pf as
        select paper, fold, key, bool_or(cp) as cp, bool_or(cs) as cs, bool_or(ln) as ln
        from _uses where split = 'train' group by paper, fold, key""").fetchall()
    con.execute("""
        create or replace temp table _form_fold as
        select key, fold, count(*) as n, sum(cp::int) as cp, sum(cs::int) as cs, sum(ln::int) as ln
        from _pf group by key, fold""").fetchall()
    con.execute("""
        create or replace temp table _target_fold as
        select key, target, fold, sum(cp::int) as cp, sum(cs::int) as cs, sum(ca::int) as ca
        from _uses where split = 'train' group by key, target, fold""").fetchall()
    # the means the shares are pulled towards, out of fold as well: per fold, of the other folds
    per_fold = {f: (n, cp, cs, ln) for f, n, cp, cs, ln in con.execute(
        "select fold, sum(n), sum(cp), sum(cs), sum(ln) from _form_fold group by fold").fetchall()}
    ca_fold = dict(con.execute("select fold, sum(ca) from _target_fold group by fold").fetchall())
    priors = []
    for f in [-1, *range(folds)]:
        n, cp, cs, ln = (sum(float(v[i] or 0) for g, v in per_fold.items() if g != f) for i in range(4))
        ca = sum(float(v or 0) for g, v in ca_fold.items() if g != f)
        priors.append((f, cp / n if n else 0.0, cs / n if n else 0.0, ln / n if n else 0.0, ca / ln if ln else 0.0))
    con.register("_priors", pa.table(dict(zip(("fold", "p_cp", "p_cs", "p_ln", "p_com"), map(list, zip(*priors))))))
    a = PRIOR_PAPERS
    return arrow_table(con, f"""
        with fa as (select key, sum(n) as n, sum(cp) as cp, sum(cs) as cs, sum(ln) as ln from _form_fold group by key),
             ta as (select key, target, sum(cp) as cp, sum(cs) as cs, sum(ca) as ca
                    from _target_fold group by key, target),
             q as (select u.paper, u.key, u.target, u.fold,
                          coalesce(fa.n, 0) - coalesce(ff.n, 0) as n,
                          coalesce(fa.cp, 0) - coalesce(ff.cp, 0) as f_cp,
                          coalesce(fa.cs, 0) - coalesce(ff.cs, 0) as f_cs,
                          coalesce(fa.ln, 0) - coalesce(ff.ln, 0) as f_ln,
                          coalesce(ta.cp, 0) - coalesce(tf.cp, 0) as t_cp,
                          coalesce(ta.cs, 0) - coalesce(tf.cs, 0) as t_cs,
                          coalesce(ta.ca, 0) - coalesce(tf.ca, 0) as t_ca
                   from _uses u
                   left join fa on fa.key = u.key
                   left join _form_fold ff on ff.key = u.key and ff.fold = u.fold
                   left join ta on ta.key = u.key and ta.target = u.target
                   left join _target_fold tf on tf.key = u.key and tf.target = u.target and tf.fold = u.fold),
             qp as (select q.*, pr.p_cp, pr.p_cs, pr.p_ln, pr.p_com from q join _priors pr on pr.fold = q.fold)
        select paper, key, target, n as form_papers, f_ln as form_linked_papers,
               (f_cp + {a} * p_cp) / (n + {a}) as link_probability,
               (f_cs + {a} * p_cs) / (n + {a}) as link_probability_sentence,
               (f_ln + {a} * p_ln) / (n + {a}) as linked_share,
               (t_cp + {a} * p_cp) / (n + {a}) as cite_share,
               (t_cs + {a} * p_cs) / (n + {a}) as cite_share_sentence,
               (t_ca + {a} * p_com) / (f_ln + {a}) as commonness
        from qp""")


# ---------------------------------------------------------------------------------- case

#: a name as written, case kept and everything but letters and digits dropped ("PaLM", "PALM"):
#: the form whose uses :func:`out_of_fold_case_stats` counts (SQL over a ``surface`` column)
CASE_KEY_SQL = "regexp_replace(surface, '[^A-Za-z0-9]', '', 'g')"
_CASE_DROP = re.compile(r"[^A-Za-z0-9]")


def case_key(surface: str) -> str:
    """:data:`CASE_KEY_SQL` of one surface form ("Llama-2" -> "Llama2", "PaLM" stays "PaLM")."""
    return _CASE_DROP.sub("", surface)


def case_stats(con: duckdb.DuckDBPyConnection, table: str | Path, where: str) -> pa.Table:
    """Per (name as written, case kept; work): the papers of the mention table matching ``where``
    (SQL) that write the name in exactly that case, and how many of them cite the work (any
    version) anywhere. "PaLM" is cited as PaLM by most papers writing it so; "PALM", an algorithm
    of the same letters, by none."""
    return arrow_table(con, f"""
        with u as (select paper, {CASE_KEY_SQL} as case_key, target, bool_or(cited_paper) as cp
                   from read_parquet('{table}') where {where} group by all)
        select case_key, target, count(*)::bigint as case_papers, sum(cp::int)::bigint as case_cited_papers
        from u group by case_key, target""")


def out_of_fold_case_stats(con: duckdb.DuckDBPyConnection, table: str | Path, *, folds: int = FOLDS) -> pa.Table:
    """Per (paper, name as written, work) of the mention table: the train papers writing the name
    in exactly that case and those of them citing the work, never counting the paper itself (the
    other folds for a train paper, as :func:`out_of_fold_stats`; every train paper for a held-out one)."""
    papers = [r[0] for r in con.execute(f"select distinct paper from read_parquet('{table}') "
                                        "where split = 'train'").fetchall()]
    con.register("_case_folds", pa.table({"paper": papers, "fold": [fold_of(p, folds) for p in papers]}))
    con.execute(f"""
        create or replace temp table _case_uses as
        select m.paper, m.split, {CASE_KEY_SQL.replace('surface', 'm.surface')} as case_key, m.target,
               bool_or(m.cited_paper) as cp, coalesce(any_value(f.fold), -1) as fold
        from read_parquet('{table}') m left join _case_folds f on f.paper = m.paper and m.split = 'train'
        group by all""").fetchall()
    con.execute("""
        create or replace temp table _case_fold as
        select case_key, target, fold, count(*) as n, sum(cp::int) as cp
        from _case_uses where split = 'train' group by case_key, target, fold""").fetchall()
    return arrow_table(con, """
        with a as (select case_key, target, sum(n) as n, sum(cp) as cp from _case_fold group by case_key, target)
        select u.paper, u.case_key, u.target,
               (coalesce(a.n, 0) - coalesce(f.n, 0))::bigint as case_papers,
               (coalesce(a.cp, 0) - coalesce(f.cp, 0))::bigint as case_cited_papers
        from _case_uses u
        left join a on a.case_key = u.case_key and a.target = u.target
        left join _case_fold f on f.case_key = u.case_key and f.target = u.target and f.fold = u.fold""")
