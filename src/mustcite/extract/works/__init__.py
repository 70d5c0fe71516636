"""The catalogue of cited works: every extracted reference that links to no corpus paper, resolved
to one record per work (a paper outside the corpus, a dataset, software, a book, a web page).

Per paper (:func:`unlinked_mentions`, a pure function of one reference file): the references with
no ``paper_id``, each with its identifiers (DOI, arXiv id and venue page ids read from the
reference's own fields and its raw text, :func:`~mustcite.extract.link.identifier_keys`), its
normalised title, year, first-author surname and labels.

Across papers (:func:`cluster_mentions`): union-find over the mentions.

1. An identifier shared by two mentions joins them.
2. The same normalised title joins mentions whose first authors agree (or one is unknown) and
   whose years are within :data:`YEAR_SLACK_SAME_AUTHOR` (arXiv and proceedings years of one
   paper differ); without an author on either side, within one year. A title of at least
   :data:`LONG_TITLE_WORDS` significant words needs no agreeing author.
3. Titles that differ by OCR or wording slips join when rapidfuzz's ``ratio`` is at least the
   linker's threshold (:data:`~mustcite.extract.link.FUZZY_THRESHOLD`), among titles that share
   one of their rarest significant words, with years within one and first authors that agree
   (or a long title).

Titles too short or generic to identify a work alone ("Technical report", "Online") take part
only through their identifiers. Each cluster becomes a :class:`Work` with the commonest title,
year, authors and venue of its mentions, all its identifiers, its :func:`work_kind`, and the papers
that cite it (with their years and labels): :func:`build_catalogue` writes both tables beside the
corpus papers (``corpus/works.parquet`` and ``corpus/work_citations.parquet``; schema
``mustcite/schemas/works.schema.json``).

Works that are records of the corpus's side file (``corpus/side_tracks.parquet``: workshop and
Findings papers, TMLR articles, WACV papers...) carry that record's id, venue, year and track
(:mod:`.side`).

Names (:mod:`.names`): the short names citing papers give their references in the text ("CIFAR-10
[23]", "Adam [17]", "ResNet-50 (He et al., 2016)"), for corpus papers and works alike, kept when
enough papers agree on them (``corpus/names.parquet``).
"""

from .catalogue import (
                        CITATIONS_FILE,
                        CITATIONS_SCHEMA,
                        NAMES_FILE,
                        NAMES_SCHEMA,
                        SUMMARY_FILE,
                        WORKS_FILE,
                        WORKS_SCHEMA,
                        CatalogueSummary,
                        WorkIndex,
                        build_catalogue,
                        collect_mentions,
                        coverage,
                        is_work_id,
                        link_side_records,
                        pool_works,
                        read_folders,
                        resolved_entries,
                        work_url,
                        works_schema_json,
)
from .cluster import KINDS, Work, cluster_mentions, identifies, make_work, supported_identifiers, work_kind
from .mentions import Mention, PaperRefs, read_paper, recover_title, title_key, unlinked_mentions, venue_of
from .names import Name, NameUse, aggregate_names, name_key, paper_names, surname
from .side import SideRecord, SideRecords

__all__ = ["CITATIONS_FILE", "CITATIONS_SCHEMA", "KINDS", "NAMES_FILE", "NAMES_SCHEMA", "Name", "NameUse",
           "aggregate_names", "name_key", "paper_names", "SUMMARY_FILE", "WORKS_FILE", "WORKS_SCHEMA",
           "CatalogueSummary", "Mention", "SideRecord", "SideRecords", "PaperRefs", "Work", "WorkIndex",
           "build_catalogue", "cluster_mentions", "collect_mentions", "coverage", "identifies", "is_work_id",
           "link_side_records", "make_work", "pool_works", "read_folders", "read_paper", "recover_title",
           "resolved_entries", "supported_identifiers", "surname", "title_key", "unlinked_mentions",
           "venue_of", "work_kind", "work_url", "works_schema_json"]
