"""``mustcite train``, ``mustcite recommend``, ``mustcite audit`` and ``mustcite serve``.

* ``train``: build the recommender from the labelled reference folders (default) or train-only on a
  built benchmark (``--benchmark NAME``); writes ``<work>/models/recommender`` and its ``card.json``;
* ``recommend``: ranked must-cite candidates for ``--title/--abstract``, ``--queries FILE.jsonl`` or
  ``--draft FILE`` in table, json, bibtex or trec format;
* ``train-cross-encoder``: add the opt-in cross-encoder re-ranker to a trained model;
* ``audit DRAFT``: the predicted must-cite papers the draft's bibliography lacks;

Time order: a query is answered as of a year (``--year``, a query's own JSONL ``"year"``, else today's
calendar year) and only papers of that year or earlier are recommended or used as evidence.
* ``serve``: the REST API and web page (FastAPI + uvicorn).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from .. import lazy_libs
from ..benchmark.recipes import benchmark_folder
from ..engine import make_engine, use_engine
from ..errors import DataMissingError, MustciteError, UsageError
from ..extract.runner import stem_of
from ..io import check_output_dir, check_output_file, iter_jsonl
from ..shown import json_shown, shown_line
from .common import workspace, write_report, year_range


def register(app: typer.Typer) -> None:
    app.command("train")(train_cmd)
    app.command("train-cross-encoder")(train_cross_cmd)
    app.command("recommend")(recommend_cmd)
    app.command("audit")(audit_cmd)
    app.command("serve")(serve_cmd)


def _year(value: int | None) -> int | None:
    """``--year`` checked: a whole number from 1900 to next year (a usage error, exit 2, otherwise)."""
    # loaded when the command runs, not at the command line's start-up
    from ..recommend.method import parse_year

    try:
        return parse_year(value, field="--year")
    except MustciteError as exc:
        raise UsageError(f"--year: {exc.message}") from None


_YEAR_HELP = "answer as of this year: only papers of this year or earlier (default: today's year)"
_MODEL_HELP = "model folder (default: <work>/models/recommender, else the demo's recommender-light)"


def _read_query_file(path: Path, year: int | None) -> list[dict]:
    """Queries of a JSONL file, each with its own ``"year"`` (checked, naming file:line) or ``year``.
    Every line is checked here, as the recommender will check it (text length, year), so a bad
    line is refused, naming file:line and the field, before the model loads."""
    # loaded when the command runs, not at the command line's start-up
    from ..recommend.query import check_text_length, parse_year
    from ..retrieval.queries import read_queries

    docs = read_queries(path)
    years: dict[str, int | None] = {}
    for lineno, obj in iter_jsonl(path):
        try:
            check_text_length(obj.get("title") or "", obj.get("abstract") or "")
            years[str(obj.get("id"))] = parse_year(obj.get("year"))
        except MustciteError as exc:
            raise MustciteError(exc.message, path=path, line=lineno, field=exc.field or "year") from None
    out = []
    for d in docs:
        own = years.get(d.id)
        out.append({"id": d.id, "title": d.title, "abstract": d.abstract, "year": year if own is None else own})
    return out


def read_hold_out(path: Path) -> list[dict]:
    """The query records of a ``--hold-out`` file: a JSON list, ``{"queries": [...]}`` or JSON lines;
    a usage error naming the file and the first bad record otherwise."""
    from ..io import read_json

    try:
        got = [obj for _, obj in iter_jsonl(path)] if path.suffix == ".jsonl" else read_json(path)
    except MustciteError as exc:
        raise UsageError(f"--hold-out {path}: {exc}") from None
    if isinstance(got, dict):
        got = got.get("queries")
    if not isinstance(got, list):
        raise UsageError(f"--hold-out {path}: expected a list of query records (or {{\"queries\": [...]}})")
    for i, q in enumerate(got, 1):
        if not isinstance(q, dict) or not (q.get("id") or q.get("title")):
            raise UsageError(f"--hold-out {path}: record {i} has neither an id nor a title")
    return got


def train_cmd(
    refs: list[Path] = typer.Option(None, "--refs", help="labelled extraction folder(s), repeatable "
                                    "(default: <work>/extract, <work>/extract-cs768 and every folder under "
                                    "<work>/references)"),
    pool: Path = typer.Option(None, "--pool", help="pool Parquet (default: <work>/corpus/papers.parquet)"),
    hold_out: Path = typer.Option(None, "--hold-out", help="default mode: a JSON list (or JSON lines) of query "
                                  "records (id, title, paper_id/versions) that no labelled paper may be, under any "
                                  "id or the same title: papers to evaluate the model on afterwards"),
    pool_years: str = typer.Option(None, "--pool-years", help="keep pool papers of these years, e.g. 2018-2023"),
    benchmark: str = typer.Option(None, "--benchmark", help="train-only on this built benchmark (e.g. neurips-2024)"),
    eval_test: bool = typer.Option(False, "--eval-test", help="benchmark mode: also report the test split"),
    out: Path = typer.Option(None, "--out", help="model folder (default: <work>/models/recommender)"),
    dense: bool = typer.Option(True, "--dense/--no-dense", help="use MiniLM embeddings besides BM25"),
    encoder: str = typer.Option(None, "--encoder", help="dense encoder: onnx-int8:minilm (default: the shipped "
                                "MiniLM as int8 ONNX), minilm (the same in full precision), static:minilm, "
                                "or a model folder"),
    max_tokens: int = typer.Option(None, "--max-tokens", min=0, help="encoder input length in tokens (default 64; "
                                   "0: the encoder's own, 256 for MiniLM)"),
    year: int = typer.Option(None, "--year", help="default mode: a model as of this year (pool and labelled "
                             "papers of this year or earlier)"),
    seed: int = typer.Option(0, "--seed"),
    dev_fraction: float = typer.Option(0.1, "--dev-fraction", min=0.0, max=0.5,
                                       help="default mode: labelled papers held out for the card's metrics"),
    refit: bool = typer.Option(True, "--refit/--no-refit",
                               help="default mode: refit on all labelled papers after scoring the hold-out"),
    works: Path = typer.Option(None, "--works", help="default mode: the catalogue of cited works whose works "
                               "join the pool (default: <work>/corpus when it holds one)"),
    no_works: bool = typer.Option(False, "--no-works", help="default mode: corpus papers only"),
    fit_queries: int = typer.Option(0, "--fit-queries", min=0, help="fit the tier models on this many labelled "
                                    "papers (benchmark mode: train queries; a fixed sample; 0: all); all of them "
                                    "still vote"),
    negatives: float = typer.Option(1.0, "--negatives", min=0.01, max=1.0,
                                    help="default mode: fit the tier models on every positive row and this share "
                                    "of the negative rows (a seeded sample, each kept one weighing 1/share)"),
    engine: str = typer.Option("local", "--engine", help="where the pool is encoded: local (this process) or "
                               "ray (its batches on a Ray cluster; pip install 'mustcite[ray]')"),
    address: str = typer.Option(None, "--address", help="with --engine ray: the Ray cluster to join "
                                "(default: start a local one)"),
) -> None:
    """Train the recommender and write its model card."""
    # loaded when the command runs, not at the command line's start-up
    from ..recommend.train import model_dir, train_benchmark, train_default

    eng = make_engine(engine, address)
    with use_engine(eng):      # the pool is encoded on the chosen engine
        work = workspace()
        log = lambda m: print(m, file=sys.stderr)  # noqa: E731
        from ..recommend.method import RecommenderConfig

        year = _year(year)
        chosen = {k: v for k, v in (("encoder", "" if encoder == "minilm" else encoder),
                                    ("max_tokens", max_tokens)) if v is not None}
        config = RecommenderConfig(dense=dense, seed=seed, **chosen)
        if benchmark:
            if year is not None:
                raise UsageError("--year is for the default mode: a benchmark fixes its own years")
            bench = benchmark_folder(work.root / "benchmarks", benchmark)
            dest = check_output_dir(out or (work.root / "models" / f"recommender-{benchmark}"))
            card = train_benchmark(bench, dest, refs=list(refs or []), dense=dense, seed=seed, eval_test=eval_test,
                                   cache_dir=work.cache, config=config, fit_queries=fit_queries, log=log)
        else:
            if not refs:
                # what `make demo` builds: <work>/extract (plus any folders under <work>/references)
                root = work.root / "references"
                refs = [f for f in (work.root / "extract", work.root / "extract-cs768") if f.is_dir()]
                refs += sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
                if not refs:
                    raise DataMissingError(f"no labelled extraction folder ({work.root / 'extract'} or under {root})",
                                           hint="pass --refs DIR (from `mustcite extract`, `link` and `annotate`)")
            dest = check_output_dir(out or model_dir(work.root))
            if works is not None and no_works:
                raise UsageError("--works and --no-works exclude each other")
            if works is None and not no_works and (work.root / "corpus" / "works.parquet").is_file():
                works = work.root / "corpus"
            card = train_default(list(refs), pool or (work.root / "corpus" / "papers.parquet"), dest, dense=dense,
                                 seed=seed, dev_fraction=dev_fraction, refit=refit, pool_years=year_range(pool_years),
                                 year=year, config=config, cache_dir=work.cache, fit_queries=fit_queries,
                                 negatives=negatives, hold_out=read_hold_out(hold_out) if hold_out else (),
                                 works=None if no_works else works, log=log)
        print(json.dumps({"model": str(dest), "metrics": card["metrics"], "ranked_by": card["ranked_by"]}, indent=2))


def train_cross_cmd(
    model: Path = typer.Option(None, "--model",
                               help="the trained model to add it to (default: <work>/models/recommender)"),
    benchmark: str = typer.Option(None, "--benchmark", help="the model is train-only on this benchmark: learn "
                                  "from its train queries only"),
    queries: int = typer.Option(600, "--queries", min=1, help="labelled papers whose top candidates train it "
                                "(a fixed sample)"),
    top: int = typer.Option(16, "--top", min=1, max=200,
                            help="candidates per labelled paper, by P(must-cite) and by P(cited)"),
    rerank: int = typer.Option(10, "--rerank", min=0, max=200, help="candidates it re-ranks at serving time (0: off; "
                              "dev: 5, 10 and 20 alike)"),
    weight: float = typer.Option(0.25, "--weight", min=0.0, help="logit(P) + weight * cross-encoder logit (dev: 0.25 "
                                 "best of 0.25-4, and no better than none)"),
    epochs: int = typer.Option(1, "--epochs", min=1, max=20),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Train the cross-encoder re-ranker (from the shipped MiniLM) on the model's own top candidates
    for its labelled papers, and add it to the model (the rest of the model is unchanged)."""
    # loaded when the command runs, not at the command line's start-up
    from ..recommend.method import Recommender
    from ..recommend.train import benchmark_train_papers, fit_cross_encoder

    work = workspace()
    folder = _model_folder(model)
    rec = Recommender.load(folder, cache_dir=work.cache)
    if not rec.tiers.models:
        raise UsageError(f"{folder}: the model has no trained tier models to re-rank")
    papers = (benchmark_train_papers(rec, benchmark_folder(work.root / "benchmarks", benchmark)) if benchmark
              else rec.labelled)
    if not papers:
        raise UsageError(f"{folder}: no labelled papers to learn from" + (f" among {benchmark}'s train queries"
                                                                         if benchmark else ""))
    rec.use_cross_encoder(fit_cross_encoder(rec, papers, queries=queries, top=top, epochs=epochs, seed=seed,
                                            log=lambda m: print(m, file=sys.stderr)))
    rec.config.cross_top, rec.config.cross_weight = rerank, weight
    rec.save_learned(folder)
    print(json.dumps({"model": str(folder), "cross_encoder": rec.cross.info, "rerank": rerank, "weight": weight},
                     indent=2))


def _model_folder(model: Path | None) -> Path:
    """``--model``, else the default model; says so on stderr when that is the demo's light one."""
    # loaded when the command runs, not at the command line's start-up
    from ..recommend.train import LIGHT_MODEL, default_model

    if model:
        return Path(model)
    folder = default_model(workspace().root)
    if folder.name == LIGHT_MODEL:
        print(f"note: using the light model {folder} (no dense encoder); `mustcite train` builds the full "
              "method into models/recommender, used by default once it exists", file=sys.stderr)
    return folder


def _load(model: Path | None, rerank: int | None = None):
    """The model; ``rerank`` (``--rerank``) overrides how many candidates its cross-encoder re-ranks."""
    # loaded when the command runs, not at the command line's start-up
    from ..recommend import load_default

    rec = load_default(workspace().root, _model_folder(model))
    if rerank is not None:
        if rerank > 0 and rec.cross is None:
            raise UsageError("--rerank: this model has no cross-encoder (`mustcite train-cross-encoder` adds one)")
        rec.config.cross_top = rerank
    return rec


_RERANK_HELP = "candidates the model's cross-encoder re-ranks (default: the model's setting; 0: off)"


def recommend_cmd(
    title: str = typer.Option(None, "--title", help="query title"),
    abstract: str = typer.Option("", "--abstract", help="query abstract"),
    queries: Path = typer.Option(None, "--queries", help='JSONL, one {"id","title","abstract"[,"year"]} a line'),
    draft: Path = typer.Option(None, "--draft", help="a draft (.pdf, .tei.xml, .md/.mmd[.gz], or LaTeX: .tex, "
                               "a project folder, .zip/.tar.gz/.tgz): its title + abstract"),
    fmt: str = typer.Option("table", "--format", help="table | json | bibtex | trec"),
    top: int = typer.Option(20, "--top", min=1, max=1000, help="results per query"),
    model: Path = typer.Option(None, "--model", help=_MODEL_HELP),
    out: Path = typer.Option(None, "--out", help="write here instead of stdout"),
    rank_by: str = typer.Option(None, "--rank-by",
                                help="order by one tier's probability: type1 | type2 | type3 | must_cite | cited "
                                     "(default: must-cite once trained)"),
    year: int = typer.Option(None, "--year", help=_YEAR_HELP + "; a --queries line's own \"year\" wins"),
    rerank: int = typer.Option(None, "--rerank", min=0, max=200, help=_RERANK_HELP),
) -> None:
    """Recommend papers a query paper must cite (papers of its year or earlier only)."""
    # loaded when the command runs, not at the command line's start-up
    from ..recommend.formats import FORMATS, render

    year = _year(year)
    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if out:
        check_output_file(out)
    given = [x for x in (title, queries, draft) if x]
    if len(given) != 1:
        raise UsageError("give exactly one of --title (with --abstract), --queries FILE or --draft FILE")
    if queries:
        qs = _read_query_file(Path(queries), year)
    elif draft:
        qs = [_draft_query(Path(draft)) | {"year": year}]
    else:
        if not title.strip():
            raise UsageError("--title is empty")
        from ..recommend.query import check_text_length

        try:
            check_text_length(title, abstract or "")
        except MustciteError as exc:
            raise UsageError(f"--{exc.field}: {exc.message}") from None
        qs = [{"id": "query", "title": title, "abstract": abstract or "", "year": year}]
    rec = _load(model, rerank)
    ranked = rec.recommend_many(qs, top=top, rank_by=rank_by)
    for qid, rs in ranked.items():
        if rs.notice:
            print(f"note: query {shown_line(qid)}: {shown_line(rs.notice)}", file=sys.stderr)
    text = render(ranked, fmt)
    write_report(text, out)


def _draft_query(path: Path) -> dict:
    # loaded when the command runs, not at the command line's start-up
    from ..recommend.draft import read_draft
    from ..recommend.query import check_text_length

    title, abstract = read_draft(path).query_text
    try:
        check_text_length(title, abstract)
    except MustciteError as exc:
        raise MustciteError(f"the draft's {exc.message}", path=path, field=exc.field) from None
    return {"id": stem_of(path), "title": title, "abstract": abstract}


AUDIT_FORMATS = ("table", "json", "markdown", "bibtex")


def audit_cmd(
    draft: Path = typer.Argument(..., help="the draft: .pdf, .tei.xml, Markdown (.md/.mmd, optionally .gz), a LaTeX "
                                           ".tex file, a LaTeX project folder, or its .zip / .tar.gz archive"),
    fmt: str = typer.Option("table", "--format", help="table | json | markdown | bibtex (entries ready to paste)"),
    top: int = typer.Option(20, "--top", min=1, max=500, help="findings to list at most"),
    min_score: float = typer.Option(0.0, "--min-score", help="only list papers scoring at least this"),
    show_all: bool = typer.Option(False, "--all", help="every finding, also those under the confidence threshold "
                                  "(by default only the ones a reviewer would likely call genuine)"),
    model: Path = typer.Option(None, "--model", help=_MODEL_HELP),
    year: int = typer.Option(None, "--year", help="the draft's year: " + _YEAR_HELP),
    rerank: int = typer.Option(None, "--rerank", min=0, max=200, help=_RERANK_HELP),
    out: Path = typer.Option(None, "--out", help="write the report to this file (default: standard output)"),
    named: str = typer.Option("rules", "--named", help="how works the text names are decided: rules (default) or "
                              "learned (the mention models in models/mentions beside the recommender, built by "
                              "`mustcite works mentions` and `mustcite works fit-mentions --work-only`)"),
    fail_on: str = typer.Option(None, "--fail-on", metavar="[TIER:]P",
                                help="exit 1 when a missing paper's probability of TIER (type1 = a baseline, the "
                                     "default; type2, type3, must_cite) reaches P, or when a citation left to do (a "
                                     "placeholder such as [?] or an empty \\cite{}, or a cited key with no "
                                     "bibliography entry) has a confidence of P or more (every one, shown or not), "
                                     "e.g. 0.5 or type2:0.6: a "
                                     "pre-submission check for CI"),
) -> None:
    """List the must-cite papers the draft's bibliography lacks, with evidence."""
    year = _year(year)
    if fmt not in AUDIT_FORMATS:
        raise UsageError(f"--format must be one of {', '.join(AUDIT_FORMATS)}, got {fmt!r}")
    if named not in ("rules", "learned"):
        raise UsageError(f"--named must be rules or learned, got {named!r}"[:120])
    # loaded when the command runs, not at the command line's start-up
    from ..recommend import formats

    gate = formats.parse_gate(fail_on) if fail_on is not None else None
    from ..recommend.audit import audit_draft
    from ..recommend.draft import read_draft

    read = read_draft(draft)     # the draft read and checked whole before the model loads
    rec = _load(model, rerank)
    if gate and gate[0] not in rec.tiers.models:
        raise UsageError(f"--fail-on: this model has no {gate[0]} tier (it has {', '.join(rec.tiers.models)})")
    res = audit_draft(rec, read, top=top, min_score=min_score, year=year, show_all=show_all, named=named)
    if fmt == "json":
        text = json_shown(json.dumps(res.to_dict(), ensure_ascii=False, indent=2)) + "\n"
    elif fmt == "markdown":
        text = formats.audit_markdown(res)
    elif fmt == "bibtex":
        text = formats.audit_bibtex(res)
    else:
        text = formats.audit_table(res)
    write_report(text, out)
    if res.notice:
        print(f"note: {shown_line(res.notice)}", file=sys.stderr)
    if gate:
        failed = formats.gate_failure(res, gate[0], gate[1])
        if failed:
            raise MustciteError(failed)


def serve_cmd(
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8000, "--port", min=1, max=65535),
    model: Path = typer.Option(None, "--model", help=_MODEL_HELP),
    workers: int = typer.Option(1, "--workers", min=1, max=64,
                                help="worker processes; each loads the model once (memory x N) and takes an "
                                     "equal share of the CPUs; requests go to the next free worker (1: the model "
                                     "in the server process)"),
    concurrency: int = typer.Option(1, "--concurrency", min=1, max=64,
                                    help="with --workers 1: requests computing at once (threads)"),
    queue: int = typer.Option(32, "--queue", min=0, max=10000,
                              help="requests waiting for a worker; more are answered 503 with Retry-After"),
    allowed_host: list[str] = typer.Option(None, "--allowed-host",
                                           help="answer only requests for this Host name (repeatable; default on "
                                                "loopback: 127.0.0.1, localhost, [::1]; '*': any)"),
    api_key: str = typer.Option(None, "--api-key", envvar="MUSTCITE_API_KEY",
                                help="require this key (header X-API-Key) on /api/* (default: $MUSTCITE_API_KEY)"),
    header_timeout: float = typer.Option(10.0, "--header-timeout", min=0.1, max=3600,
                                         help="seconds a client has to send a request's line and headers; "
                                              "slower or idle connections are closed"),
) -> None:
    """Serve the REST API (/api/...) and the web page (/); /api/health answers 503 until the model is loaded."""
    lazy_libs.fastapi("mustcite serve")        # the extra's libraries, named if missing
    lazy_libs.uvicorn("mustcite serve")
    # loaded when the command runs, not at the command line's start-up
    from ..api.guards import default_allowed_hosts, is_loopback
    from ..api.serve import ServeSettings, serve
    from ..api.timeouts import Timeouts
    from ..recommend.model_store import read_config

    folder = _model_folder(model)
    read_config(folder)      # fail now, naming the file, not after the server is up
    hosts = list(allowed_host or default_allowed_hosts(host))
    if "*" in hosts:
        hosts = []
    if not is_loopback(host) and not api_key:
        print(f"warning: serving on {host} without an API key: anyone who can reach this address can use "
              "the server (--api-key or $MUSTCITE_API_KEY)", file=sys.stderr)
    work = workspace()
    serve(ServeSettings(model=str(folder), work=str(work.root), workers=workers, concurrency=concurrency,
                        queue=queue, allowed_hosts=hosts, api_key=api_key or None,
                        timeouts=Timeouts(header=header_timeout)), host=host, port=port)
