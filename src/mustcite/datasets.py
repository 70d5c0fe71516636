"""Registry of the datasets mustcite reads: what files each needs and where a user gets them.

Each :class:`Dataset` names the files it needs relative to the data directory and the public GitHub
repository and commit they come from (from each folder's PROVENANCE.md). Where a manifest in the
data directory lists files with sha256 (``proceedings/manifest.json``, ``neurips/*/manifest.jsonl``),
those files and hashes are added, each with the raw URL of its source file at the pinned commit.

``require(dataset_id, data_dir)`` raises :class:`DataMissingError` naming what is missing and how
to get it; ``check(dataset_id, data_dir)`` also verifies sha256. Used by ``mustcite data``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import DataMissingError, UsageError
from .io import iter_jsonl, read_json, sha256_file

GITHUB = "https://github.com"
RAW = "https://raw.githubusercontent.com"


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset. ``sha256_of`` is ``"file"`` (bytes on disk) or ``"gunzip"`` (the
    decompressed content, as the NeurIPS full-text manifests give it)."""

    path: str
    url: str = ""
    sha256: str = ""
    sha256_of: str = "file"

    def to_dict(self) -> dict[str, str]:
        d = {"path": self.path, "url": self.url, "sha256": self.sha256}
        if self.sha256 and self.sha256_of != "file":
            d["sha256_of"] = self.sha256_of
        return d


@dataclass(frozen=True)
class Dataset:
    id: str
    description: str
    folder: str                              # relative to the data dir
    sources: tuple[tuple[str, str], ...]     # (owner/repo, commit)
    license: str
    files: tuple[str, ...]                   # always-needed files, relative to the data dir
    manifest: str = ""                       # loader name for manifest-listed files
    used_by: str = ""
    notes: str = ""

    def source_urls(self) -> list[str]:
        return [f"{GITHUB}/{repo}/tree/{commit}" for repo, commit in self.sources]

    def how_to_get(self) -> str:
        urls = ", ".join(self.source_urls())
        return (f"copy the '{self.folder}' folder of the mustcite shared data into your data dir "
                f"(--data / $MUSTCITE_DATA), or rebuild it from {urls} as {self.folder}/PROVENANCE.md describes")


_S2ORC = "allenai/s2orc-doc2json"
_S2ORC_COMMIT = "71c022ed4bed3ffc71d22c2ac5cdbc133ad04e3c"
_MULTICITE_SPLITS = tuple(f"intents/multicite/classification_{ctx}/{split}.json.gz"
                          for ctx in ("gold_context", "1_context", "3_context")
                          for split in ("train", "dev", "test"))

DATASETS: dict[str, Dataset] = {d.id: d for d in [
    Dataset("proceedings", "Paper lists of the 15 venues (papercopilot/paperlists + 21 second sources)",
            "proceedings",
            (("papercopilot/paperlists", "33f9884e652f05a768d2f216534d7f1e446a0cf7"),
             ("dqieu/ICLR-Oral", "2b96f18ca1e6a6f2d70f72c844cb18b37a5a0c1c"),
             ("arivero/NeurIPS2025_AcceptedPapers", "979140e4137a5f3887a31eea52af87c148e5ed4c")),
            "none stated (paper metadata)", ("proceedings/manifest.json", "proceedings/PROVENANCE.md"),
            manifest="proceedings", used_by="corpus",
            notes="per-file sources, commits and sha256 in proceedings/manifest.json"),
    Dataset("neurips-fulltext-2024", "1,520 NeurIPS 2024 full texts (Nougat markdown, .md.gz)",
            "neurips/fulltext_2024",
            (("guochenmeinian/llm-review-sys", "827b2821450c1dceb9b3ebfc1d89e2fefb8a18eb"),),
            "none stated", ("neurips/fulltext_2024/manifest.jsonl", "neurips/PROVENANCE.md"),
            manifest="neurips", used_by="extract, benchmark queries"),
    Dataset("neurips-fulltext-2023", "1,400 NeurIPS 2023 full texts (Nougat markdown, .md.gz)",
            "neurips/fulltext_2023",
            (("guochenmeinian/llm-review-sys", "827b2821450c1dceb9b3ebfc1d89e2fefb8a18eb"),),
            "none stated", ("neurips/fulltext_2023/manifest.jsonl", "neurips/PROVENANCE.md"),
            manifest="neurips", used_by="extract, labelled pool"),
    Dataset("s2orc-doc2json", "2 PDFs with GROBID TEI and S2ORC JSON gold, 3 JATS, 8 S2ORC JSON",
            "pdfs/s2orc-doc2json", ((_S2ORC, _S2ORC_COMMIT),), "Apache-2.0 (PDFs: CC BY 4.0)",
            tuple("pdfs/s2orc-doc2json/" + p for p in (
                "PROVENANCE.md",
                "pdf/2020.acl-main.207.pdf", "pdf/2020.acl-main.207.tei.xml", "pdf/2020.acl-main.207.json",
                "pdf/N18-3011.pdf", "pdf/N18-3011.tei.xml", "pdf/N18-3011.json",
                "jats/PMC5828200.nxml", "jats/PMC6398430.nxml", "jats/PMC7417471.nxml",
                "s2orc/20190928/10002293.json", "s2orc/20190928/10042064.json",
                "s2orc/20190928/10045593.json", "s2orc/20200705/18980380.json",
                "s2orc/20200705/18980463.json", "s2orc/20200705/94551546.json",
                "s2orc/20210101/24e6b80e338a4e543de6b49cada07156c9149d22.json",
                "s2orc/20210101/f2235cd28c171f9f3b6a8bcebe246159c464980c.json")),
            manifest="s2orc", used_by="extract (PDF and TEI paths)"),
    Dataset("multicite", "MultiCite citation-intent splits (gold, 1- and 3-sentence contexts)",
            "intents/multicite", (("allenai/multicite", "120671924b5ab968b98c7f696c4b67b4f8118948"),),
            "CC BY-NC 2.0 (non-commercial)",
            ("intents/multicite/PROVENANCE.md", "intents/multicite/labels.json", *_MULTICITE_SPLITS),
            used_by="labels (judge agreement)"),
    Dataset("scidoca", "SCIDOCA 2025 README (two versions) and one real Task 1 example", "scidoca",
            (("daotuanan/scidoca2025-shared-task", "07b7bcf28445c84d9fcc862c10e73b74f465982e"),
             ("trieuhoangan/SCIDOCA2025", "09d31b3c9d0f4fe858555ca3c035219c716f874a")),
            "none stated",
            ("scidoca/PROVENANCE.md", "scidoca/README.daotuanan-scidoca2025-shared-task.md",
             "scidoca/README.daotuanan-scidoca2025-shared-task.at-1e9b34f.md",
             "scidoca/task1_example_from_trieuhoangan.json"), used_by="SCIDOCA formats"),
    Dataset("venue-pages", "Recorded official proceedings sources (PMLR, ACL Anthology XML, CVF, JMLR)",
            "venue_pages",
            (("mlresearch/v247", "7eb8599cd61b085c94f00018af4107079b2c5273"),
             ("mlresearch/v286", "60cff83fb35d2f21a53f21d5bd47a49c2ded3e4d"),
             ("mlresearch/v235", "3b577057bdd5843542bca85487dfd8834f6c81bc"),
             ("yhamidullah/acl-anthology", "e56721e03580924c79b23ebe0c10302b1166d400"),
             ("papis/papis", "9cbb01cf6bc0f4a79869ef1574b87015fd9fe673"),
             ("mattdeitke/CVPR2019", "05637e7cd406636fd7e76baa9ca7177e11a7dd02"),
             ("Divs1159/CVPR-Accepted-Papers-Viewer", "b337ea0d7d0b10a15dabf052d90cf2e618a235f4"),
             ("JmlrOrg/v20", "38049b59123d86cd004f611be4db6571a1591c6c")),
            "see venue_pages/PROVENANCE.md (per file)",
            tuple("venue_pages/" + p for p in (
                "PROVENANCE.md", "README.md", "pmlr/v247_colt2024.tar.gz", "pmlr/v286_uai2025.tar.gz",
                "pmlr/v235_icml2024_sample/_config.yml", "acl_anthology/2024.acl.xml.gz",
                "acl_anthology/2024.naacl.xml.gz", "acl_anthology/2023.emnlp.xml.gz",
                "acl_anthology/pages/ACL_2021.naacl-main.208.html",
                "acl_anthology/pages/ACL_N04-1001.html", "cvf/CVPR2019.py.html.gz",
                "cvf/CVPR2020.py.html.gz", "jmlr/v20_info_json.tar.gz")),
            used_by="collectors"),
]}


def get_dataset(dataset_id: str) -> Dataset:
    try:
        return DATASETS[dataset_id]
    except KeyError:
        raise UsageError(f"unknown dataset '{dataset_id}'; known: {', '.join(DATASETS)}") from None


def _proceedings_files(data_dir: Path) -> list[DataFile]:
    m = read_json(data_dir / "proceedings" / "manifest.json")
    out = []
    for entry in m.get("files", {}).values():
        url = (f"{RAW}/{entry['source_repo']}/{entry.get('commit') or entry.get('snapshot_commit')}/"
               f"{entry['source_path']}" if entry.get("source_path") and entry.get("source_repo") else "")
        out.append(DataFile("proceedings/" + entry["file"], url, entry.get("sha256", "")))
    for entry in m.get("extra_sources", []):
        paths = entry.get("source_paths") or []
        url = f"{RAW}/{entry['repo']}/{entry['commit']}/{paths[0]}" if len(paths) == 1 else \
            f"{GITHUB}/{entry['repo']}/tree/{entry['commit']}"
        out.append(DataFile("proceedings/" + entry["output"], url, entry.get("sha256", "")))
    return out


def _neurips_files(data_dir: Path, ds: Dataset) -> list[DataFile]:
    out = []
    for _, row in iter_jsonl(data_dir / ds.folder / "manifest.jsonl"):
        url = (f"{RAW}/{row['source_repo']}/{row['source_commit']}/{row['source_path']}"
               if row.get("source_path") else "")
        out.append(DataFile(f"{ds.folder}/{row['id']}.md.gz", url, row.get("sha256", ""), "gunzip"))
    return out


def dataset_files(dataset_id: str, data_dir: str | Path | None = None) -> list[DataFile]:
    """Every file of the dataset: the fixed ones, plus those its manifest lists (when present)."""
    ds = get_dataset(dataset_id)
    files = [DataFile(p) for p in ds.files]
    if ds.manifest == "s2orc":
        files = [DataFile(p, f"{RAW}/{_S2ORC}/{_S2ORC_COMMIT}/tests/{p.split('/', 2)[2]}")
                 if not p.endswith("PROVENANCE.md") else DataFile(p) for p in ds.files]
    if data_dir is None:
        return files
    data_dir = Path(data_dir)
    if not (data_dir / ds.files[0]).is_file():
        return files
    if ds.manifest == "proceedings":
        files += _proceedings_files(data_dir)
    elif ds.manifest == "neurips":
        files += _neurips_files(data_dir, ds)
    return files


@dataclass
class CheckResult:
    dataset: str
    files: int = 0
    missing: list[str] = field(default_factory=list)
    mismatched: list[str] = field(default_factory=list)
    verified: int = 0                        # files whose sha256 was compared and matched

    @property
    def ok(self) -> bool:
        return not self.missing and not self.mismatched

    def to_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "ok": self.ok, "files": self.files, "verified": self.verified,
                "missing": self.missing, "mismatched": self.mismatched}


def check(dataset_id: str, data_dir: str | Path, *, verify: bool = True) -> CheckResult:
    """Which files are missing and (``verify``) which do not match their sha256."""
    data_dir = Path(data_dir)
    res = CheckResult(dataset_id)
    for f in dataset_files(dataset_id, data_dir):
        res.files += 1
        p = data_dir / f.path
        if not p.is_file():
            res.missing.append(f.path)
        elif verify and f.sha256:
            if sha256_file(p, gunzip=f.sha256_of == "gunzip") == f.sha256:
                res.verified += 1
            else:
                res.mismatched.append(f.path)
    return res


def require(dataset_id: str, data_dir: str | Path) -> Path:
    """Return the dataset folder, or raise DataMissingError naming the missing files and their source."""
    ds = get_dataset(dataset_id)
    res = check(dataset_id, data_dir, verify=False)
    if res.missing:
        shown = ", ".join(res.missing[:5]) + (f" and {len(res.missing) - 5} more" if len(res.missing) > 5 else "")
        raise DataMissingError(f"dataset '{dataset_id}' is incomplete in {data_dir}: missing {shown}",
                               hint=ds.how_to_get())
    return Path(data_dir) / ds.folder
