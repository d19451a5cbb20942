"""What an export's manifest says, and how a file is checked against it.

A manifest names the export (`export_id`, `tenant_id`, `format`, `filters`, `created_at`), what it holds
(`rows`, `first_sequence`, `last_sequence`, `bytes`, `sha256` of the file's bytes) and the tenant's chain head
when the export started (`chain_head`: sequence and signature), and is signed with the service's Ed25519 key
(`signing.sign_manifest`).

`check_file(data, manifest, public_key)` is what `python run.py verify-export` runs: the manifest's signature,
then the file's size and SHA-256, then its rows (count, first and last sequence, sequences increasing, and for
an unfiltered export each row's `prev_signature` equal to the previous row's `signature`, the first row
sequence 1 from the genesis value and the last row the manifest's `chain_head`: the whole chain, so entries
deleted from the database at either end are caught). It returns the problems found (empty: intact); it needs
neither the database nor any server secret.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import itertools
import json
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from agentgov.audit_chain import GENESIS, ChainHead
from agentgov.exports.formats import COLUMNS
from agentgov.exports.signing import manifest_signed_by
from agentgov.storage.audit import ExportFilter
from agentgov.timeutil import now_iso


@dataclasses.dataclass
class Tally:
    """What an export wrote so far."""

    rows: int = 0
    first_sequence: int | None = None
    last_sequence: int | None = None
    size: int = 0
    digest: Any = dataclasses.field(default_factory=hashlib.sha256)

    def add(self, data: bytes) -> None:
        self.size += len(data)
        self.digest.update(data)

    def rows_seen(self, first: int, last: int, count: int) -> None:
        if self.first_sequence is None:
            self.first_sequence = first
        self.last_sequence = last
        self.rows += count


def build_manifest(
    *, export_id: str, tenant_id: str, fmt: str, where: ExportFilter, tally: Tally, head: ChainHead | None
) -> dict[str, Any]:
    return {
        "export_id": export_id,
        "tenant_id": tenant_id,
        "format": fmt,
        "filters": where.to_public(),
        "rows": tally.rows,
        "first_sequence": tally.first_sequence,
        "last_sequence": tally.last_sequence,
        "bytes": tally.size,
        "sha256": tally.digest.hexdigest(),
        "chain_head": None if head is None else {"sequence": head.sequence, "signature": head.signature},
        "created_at": now_iso(),
    }


def _rows(data: bytes, fmt: str) -> list[dict[str, Any]]:
    """The file's rows as {sequence, prev_signature, signature}. Raises `ValueError` when unreadable."""
    text = data.decode("utf-8")
    if fmt == "csv":
        reader = csv.reader(io.StringIO(text, newline=""))
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise ValueError("the CSV header is not the export's")
        records = [dict(zip(COLUMNS, row, strict=True)) for row in reader]
        return [
            {"sequence": int(r["sequence"]), "prev_signature": r["prev_signature"], "signature": r["signature"]}
            for r in records
        ]
    if fmt == "json":
        items = json.loads(text)
    elif fmt == "jsonl":
        items = [json.loads(line) for line in text.split("\n") if line.strip()]
    else:
        raise ValueError(f"unknown format {fmt!r}")
    return [
        {"sequence": int(i["sequence"]), "prev_signature": i["prev_signature"], "signature": i["signature"]}
        for i in items
    ]


def check_file(data: bytes, manifest: dict[str, Any], public_key: Ed25519PublicKey) -> list[str]:
    """The problems of `data` against `manifest` (see the module docstring); empty when intact."""
    if not manifest_signed_by(manifest, public_key):
        return ["the manifest's signature does not verify with this public key (manifest altered or wrong key)"]
    problems = []
    if len(data) != manifest.get("bytes"):
        problems.append(f"the file has {len(data)} bytes; the manifest says {manifest.get('bytes')}")
    if hashlib.sha256(data).hexdigest() != manifest.get("sha256"):
        problems.append("the file's SHA-256 differs from the manifest's: its content was changed")
    try:
        rows = _rows(data, str(manifest.get("format")))
    except (ValueError, KeyError, TypeError) as exc:
        return [*problems, f"the file cannot be read as {manifest.get('format')}: {exc}"]
    if len(rows) != manifest.get("rows"):
        problems.append(f"the file has {len(rows)} rows; the manifest says {manifest.get('rows')}")
    if rows:
        if rows[0]["sequence"] != manifest.get("first_sequence") or rows[-1]["sequence"] != manifest.get(
            "last_sequence"
        ):
            problems.append("the first or last sequence differs from the manifest's")
        for before, after in itertools.pairwise(rows):
            if after["sequence"] <= before["sequence"]:
                problems.append(f"rows out of order at sequence {after['sequence']}")
                break
            if not manifest.get("filters") and (
                after["sequence"] != before["sequence"] + 1 or after["prev_signature"] != before["signature"]
            ):
                problems.append(f"the chain is broken before sequence {after['sequence']} (a row missing or moved)")
                break
    if not manifest.get("filters"):
        problems.extend(_whole_chain_problems(rows, manifest.get("chain_head")))
    return problems


def _whole_chain_problems(rows: list[dict[str, Any]], head: Any) -> list[str]:
    """An unfiltered export is the whole chain up to its head: it starts at sequence 1 from the genesis value and
    ends at the head the manifest names. A file that starts later (its oldest entries were deleted from the
    database) or stops short of the head (its newest were) is not the whole chain."""
    problems = []
    if rows and (rows[0]["sequence"] != 1 or rows[0]["prev_signature"] != GENESIS):
        problems.append(
            f"the chain does not start at sequence 1 from the genesis value: it starts at {rows[0]['sequence']} "
            "(earlier entries are missing)"
        )
    if isinstance(head, dict) and head.get("sequence"):
        at_head = f"the chain's head when exported was sequence {head['sequence']}"
        last = rows[-1] if rows else None
        if last is None:
            problems.append(f"{at_head}; the file holds no entry")
        elif last["sequence"] != head["sequence"]:
            problems.append(f"{at_head}; the file ends at {last['sequence']} (later entries are missing)")
        elif last["signature"] != head["signature"]:
            problems.append(f"{at_head}; the file's entry {last['sequence']} has another signature")
    return problems
