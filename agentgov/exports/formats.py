"""How an audit entry is written in each export format.

* `csv`: RFC 4180 (comma-separated, CRLF line ends, fields quoted when they hold a comma, a quote or a line
  break, quotes doubled), a header row of `COLUMNS`; objects and lists as JSON text, booleans `true`/`false`,
  null as an empty cell. A cell a spreadsheet would run as a formula (its first character `=`, `+`, `-`, `@`,
  tab or carriage return) is written with a leading apostrophe, the convention spreadsheets read as "text".
* `json`: one JSON array of entry objects, written one entry at a time.
* `jsonl`: one entry object per line (JSON Lines).

Every row carries its chain fields (`sequence`, `prev_signature`, `signature`), so a file can be checked
against the chain. `Encoder` is stateful (the JSON array's commas): one per export.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

FORMATS = ("csv", "json", "jsonl")
MEDIA_TYPES = {
    "csv": "text/csv",  # answered with "; charset=utf-8"
    "json": "application/json",
    "jsonl": "application/x-ndjson",
}
COLUMNS = (
    "sequence",
    "id",
    "kind",
    "timestamp",
    "created_at",
    "agent_id",
    "actor",
    "action",
    "resource",
    "input",
    "output",
    "reasoning",
    "risk_score",
    "is_approved",
    "decision",
    "anomaly",
    "prev_signature",
    "signature",
)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str:
    """One value as CSV cell text (before quoting), formula starts neutralised."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    else:
        text = str(value)
    if text.startswith(FORMULA_STARTS) and not isinstance(value, int | float):
        return "'" + text
    return text


def _csv_line(cells: list[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\r\n").writerow(cells)
    return buffer.getvalue()


class Encoder:
    """Writes one export: `start()`, then `row(entry)` for each entry (as `AuditEntry.to_public()`), then
    `end()`; each returns text to send."""

    def __init__(self, fmt: str) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown export format {fmt!r}; one of {', '.join(FORMATS)}")
        self.format = fmt
        self._rows = 0

    def start(self) -> str:
        if self.format == "csv":
            return _csv_line(list(COLUMNS))
        return "[" if self.format == "json" else ""

    def row(self, entry: dict[str, Any]) -> str:
        self._rows += 1
        if self.format == "csv":
            return _csv_line([csv_cell(entry.get(column)) for column in COLUMNS])
        text = json.dumps({column: entry.get(column) for column in COLUMNS}, ensure_ascii=False, separators=(",", ":"))
        if self.format == "jsonl":
            return text + "\n"
        return ("\n" if self._rows == 1 else ",\n") + text

    def end(self) -> str:
        if self.format == "json":
            return "\n]\n" if self._rows else "]\n"
        return ""
