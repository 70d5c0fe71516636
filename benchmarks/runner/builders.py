"""Named row-builders: the few tables whose rows a plain JSON path cannot give.

A row group ``{builder: NAME, ...}`` of a table spec calls ``BUILDERS[NAME](ctx, **arguments)``,
which returns ``(key, object)`` pairs; the row group's and the columns' templates render them as
they render the members of ``each:``. Keep this list short: a table that a spec can describe needs
no builder.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from benchmarks.runner.render import Context, SpecError


def markdown_tables(ctx: Context, path: str) -> list[tuple[str, dict]]:
    """Rows from markdown tables stored as text in the JSON (``path``: a mapping of NAME to the
    text of a table whose first column is the row's label). Row ``KEY`` (a label) holds, per NAME,
    the table's cells by header, as numbers where a cell is one (bold and significance stars taken
    off). For results that kept only the printed table (``dense_subset.json``)."""
    tables = ctx.value(path)
    if not isinstance(tables, dict):
        raise SpecError(f"{path}: expected a mapping of name to markdown table")
    rows: dict[str, dict] = {}
    for name, text in tables.items():
        header = None
        for line in str(text).splitlines():
            if not line.startswith("|") or re.fullmatch(r"\|[-:| ]+\|", line.strip()):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
                continue
            values = {}
            for h, c in zip(header[1:], cells[1:]):
                bare = c.replace("*", "")
                try:
                    values[h] = float(bare)
                except ValueError:
                    values[h] = bare
            rows.setdefault(cells[0].replace("*", ""), {})[name] = values
    return list(rows.items())


BUILDERS: dict[str, Callable[..., list]] = {
    "markdown_tables": markdown_tables,
}
