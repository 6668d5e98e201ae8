"""SearchFilter as an SQL WHERE fragment, so filters run inside the query, never after it.

Metadata keys and values are always bound parameters, never spliced into SQL or a JSON
path: SQLite's json_extract path syntax cannot name every key (a key holding `"` has no
path in SQLite 3.40, and how escaped keys match changed in 3.45). METADATA_JSON_SQL
compares through json_each, which yields each key decoded, so any key string compares
exactly; a table of (key, value, row) pairs serves large tables faster through its index.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ragstream.common.models import SearchFilter


@dataclass(frozen=True, slots=True)
class SqlWhere:
    sql: str
    """Conditions joined by AND ("1" when there are none)."""
    params: tuple[object, ...]


METADATA_JSON_SQL = (
    "EXISTS (SELECT 1 FROM json_each({column}) AS m "
    "WHERE m.key = ? AND m.type = 'text' AND m.value = ?)"
)
"""A metadata condition over a JSON object column (format with `column=`)."""


def filter_where(
    search_filter: SearchFilter, *, metadata_sql: str, timestamp_col: str, doc_ids_sql: str
) -> SqlWhere:
    """The filter as SQL conditions on one row.

    `metadata_sql` is a condition with two `?`, bound to one key and its wanted value.
    `doc_ids_sql` is a condition with one `?`, bound to a JSON array of the wanted doc ids
    (one parameter however many ids: no limit on host parameters is ever reached). A row
    with a NULL timestamp never satisfies a time bound.
    """
    conditions: list[str] = []
    params: list[object] = []
    for key, value in sorted(search_filter.metadata.items()):
        conditions.append(metadata_sql)
        params.extend((key, value))
    if search_filter.time_from is not None:
        conditions.append(f"{timestamp_col} >= ?")
        params.append(float(search_filter.time_from))
    if search_filter.time_to is not None:
        conditions.append(f"{timestamp_col} < ?")
        params.append(float(search_filter.time_to))
    if search_filter.doc_ids is not None:
        # An empty set allows nothing: the condition is then false for every row.
        conditions.append(doc_ids_sql)
        params.append(json.dumps(sorted(search_filter.doc_ids)))
    return SqlWhere(" AND ".join(conditions) or "1", tuple(params))
