"""The audit trail's tamper-evident chain: canonical form, per-tenant keys, HMAC chaining, verification.

Pure and synchronous: no I/O, no trio. Storage and the audit actor call it.

Chain. Every tenant has its own chain. Entry ``n`` carries::

    signature_n = hex(HMAC-SHA256(K_tenant, canonical(entry_n)))

where ``canonical(entry_n)`` is a fixed-order JSON array of every stored field of the entry (tenant, id, time,
kind, agent, actor, action, resource, input, output, reasoning, risk score, approval, decision, deduplication
key, and the event time when the agent gave one) *and* ``prev_signature``, the signature of entry ``n - 1``
(``GENESIS`` for the first entry). So changing any field of an entry breaks its own signature, and removing,
inserting or moving an entry breaks the link of the entry after it. The ``sequence`` column (1, 2, 3, ... per
tenant) is the index the chain is read in; it is not inside the MAC but is checked against the links: a gap is
a deletion, a link to an entry stored elsewhere is a reorder, a renumbering shows as the deletion or insertion
that needed it (rather than as every renumbered entry). The chain *head* (last sequence and last signature) is
stored beside the key with its own MAC, so deleting entries from the end is detected.

Key. ``K_tenant = HMAC-SHA256(server_secret, "agentgov-audit-key-v1" | tenant_id | salt)``, where the
salt is 32 random bytes stored per tenant and ``server_secret`` is the ``AUDIT_SECRET`` setting (never
stored in the database). A ``key_check`` value stored with the salt tells a changed secret apart from a
tampered chain.

Trust model. Someone with write access to the database but not the server secret cannot produce valid
signatures, so any edit, deletion, insertion or reordering of entries is detected and located by
`ChainVerifier`. Someone holding both the database and ``AUDIT_SECRET`` can rewrite and re-sign the whole
chain; so can someone who truncates the chain *and* restores a head record they copied earlier. Against
those, copy the head (``GET /api/v1/audit/verify`` reports it) to a system they do not control.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

GENESIS = "0" * 64
_DOMAIN = "agentgov-audit-v1"
_KEY_DOMAIN = b"agentgov-audit-key-v1"
_CHECK_DOMAIN = b"agentgov-audit-key-check-v1"
_HEAD_DOMAIN = "agentgov-audit-head-v1"


def canonical_json(value: Any) -> str:
    """Deterministic JSON text of `value` (sorted keys, no spaces, UTF-8 kept).

    Raises `ValueError` for values JSON cannot represent exactly (NaN, infinities, non-JSON types).
    """
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not representable as JSON: {exc}") from None


def derive_key(server_secret: str, tenant_id: str, salt: str) -> bytes:
    """The tenant's chain key, derived from the server secret and the tenant's stored random salt."""
    message = b"\x00".join((_KEY_DOMAIN, tenant_id.encode(), salt.encode()))
    return hmac.new(server_secret.encode(), message, hashlib.sha256).digest()


def key_check(key: bytes) -> str:
    """A value stored beside the salt that shows whether a later secret derives the same key."""
    return hmac.new(key, _CHECK_DOMAIN, hashlib.sha256).hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class ChainRow:
    """One entry as the chain sees it: the signed fields, its position and its signature."""

    tenant_id: str
    id: str
    sequence: int
    created_at: str
    kind: str
    agent_id: str
    actor: str
    action: str
    resource: str
    input: str | None
    output: str | None
    reasoning: str | None
    risk_score: float | None
    is_approved: bool | None
    decision: str | None
    dedup_key: str | None
    prev_signature: str
    signature: str = ""
    occurred_at: str | None = None  # the event time the agent gave, if any (`created_at` is the receipt time)


CHAIN_FIELDS = tuple(f.name for f in dataclasses.fields(ChainRow))


def canonical(row: ChainRow, prev_signature: str | None = None) -> bytes:
    """The exact bytes the entry's signature covers (everything except `sequence` and `signature`).

    `input`, `output`, `reasoning` and `decision` are the stored JSON texts, so verification does not
    depend on re-serialising them. `prev_signature`, if given, stands in for the row's own. Raises
    `ValueError` if `risk_score` is NaN or infinite.
    """
    fields = [
        _DOMAIN,
        row.tenant_id,
        row.id,
        row.created_at,
        row.kind,
        row.agent_id,
        row.actor,
        row.action,
        row.resource,
        row.input,
        row.output,
        row.reasoning,
        row.risk_score,
        row.is_approved,
        row.decision,
        row.dedup_key,
        row.prev_signature if prev_signature is None else prev_signature,
    ]
    if row.occurred_at is not None:  # entries without an event time keep the form they were signed in
        fields.append(row.occurred_at)
    return canonical_json(fields).encode()


def sign(key: bytes, row: ChainRow) -> str:
    """The hex HMAC-SHA256 of the entry under `key` (its `signature` field is ignored)."""
    return _hmac_hex(key, canonical(row))


_GIL_FREE_PIECE = 2047
"""hashlib releases the GIL for updates of 2048 bytes or more. A worker thread that releases it waits to
take it back behind a busy event loop (up to a switch interval each time); fed in smaller pieces, a batch of
entries is signed without letting go of it."""


def _hmac_hex(key: bytes, message: bytes) -> str:
    mac = hmac.new(key, digestmod=hashlib.sha256)
    for start in range(0, len(message), _GIL_FREE_PIECE):
        mac.update(message[start : start + _GIL_FREE_PIECE])
    return mac.hexdigest()


@dataclasses.dataclass(frozen=True, slots=True)
class ChainHead:
    """The end of a tenant's chain: last sequence (0 when empty), last signature, and its MAC."""

    sequence: int
    signature: str
    mac: str


def head_mac(key: bytes, tenant_id: str, sequence: int, signature: str) -> str:
    message = canonical_json([_HEAD_DOMAIN, tenant_id, sequence, signature]).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def make_head(key: bytes, tenant_id: str, sequence: int, signature: str) -> ChainHead:
    return ChainHead(sequence, signature, head_mac(key, tenant_id, sequence, signature))


def genesis_head(key: bytes, tenant_id: str) -> ChainHead:
    return make_head(key, tenant_id, 0, GENESIS)


def extend(key: bytes, head: ChainHead, tenant_id: str, rows: list[ChainRow]) -> tuple[list[ChainRow], ChainHead]:
    """Chain `rows` (their `sequence`, `prev_signature` and `signature` are replaced) after `head`.

    Returns the signed rows, in order, and the new head. Raises `ValueError` as `canonical` does.
    """
    signed: list[ChainRow] = []
    sequence, previous = head.sequence, head.signature
    for row in rows:
        sequence += 1
        signature = _hmac_hex(key, canonical(row, previous))
        fields = {name: getattr(row, name) for name in CHAIN_FIELDS}  # dataclasses.replace is several times slower
        fields.update(sequence=sequence, prev_signature=previous, signature=signature)
        signed.append(ChainRow(**fields))
        previous = signature
    return signed, make_head(key, tenant_id, sequence, previous)


# --------------------------------------------------------------------------------------------- verify


@dataclasses.dataclass(frozen=True, slots=True)
class Finding:
    """One thing wrong with the chain, and where.

    `kind` is one of ``modified``, ``deleted``, ``inserted``, ``reordered``, ``head`` (the head record)
    or ``key`` (the secret does not derive the key the chain was signed with). `sequence` (and
    `last_sequence` for a range) and `entry_id` locate it when it concerns entries.
    """

    kind: str
    detail: str
    sequence: int | None = None
    last_sequence: int | None = None
    entry_id: str | None = None

    def to_public(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, slots=True)
class Report:
    """The outcome of verifying one tenant's chain. `intact` is true when there are no findings."""

    tenant_id: str
    intact: bool
    checked: int
    head_sequence: int | None
    head_signature: str | None
    findings: tuple[Finding, ...]
    truncated: bool

    def to_public(self) -> dict[str, Any]:
        return {
            "tenant_id": self.tenant_id,
            "intact": self.intact,
            "checked": self.checked,
            "head": None
            if self.head_sequence is None
            else {"sequence": self.head_sequence, "signature": self.head_signature},
            "findings": [f.to_public() for f in self.findings],
            "truncated": self.truncated,
        }


@dataclasses.dataclass(frozen=True, slots=True)
class Located:
    """Where an entry with a given signature is stored."""

    sequence: int
    entry_id: str


#: Finds the stored entry that has a signature (None if none has).
Locate = Callable[[str], Located | None]


@dataclasses.dataclass(frozen=True, slots=True)
class _Seen:
    sequence: int
    id: str
    signature: str
    expected: str


def _entries(first: int, last: int) -> str:
    if first == last:
        return f"the entry with sequence {first} is"
    return f"the entries with sequence {first}..{last} are"


def key_mismatch_report(tenant_id: str, head: ChainHead | None) -> Report:
    finding = Finding(
        "key",
        "the configured AUDIT_SECRET does not derive the key this chain was signed with "
        "(the secret changed, or the stored key salt was altered); the entries cannot be checked",
    )
    return Report(
        tenant_id,
        False,
        0,
        None if head is None else head.sequence,
        None if head is None else head.signature,
        (finding,),
        False,
    )


def missing_record_report(tenant_id: str, entries: int) -> Report:
    finding = Finding(
        "head",
        f"the chain record (key salt and head) is missing while {entries} entries exist: deleted; "
        "the entries cannot be checked",
    )
    return Report(tenant_id, False, 0, None, None, (finding,), False)


class ChainVerifier:
    """Checks a tenant's entries, fed in ascending `sequence` order, against the key and the head.

    Usage: ``v = ChainVerifier(key, tenant_id, head, locate)``, ``v.feed(row)`` for each stored row in
    sequence order, then ``v.finish()`` for the `Report`. `locate` is called only where a link is
    broken, to tell a reorder from a deletion. At most `max_findings` findings are kept (`truncated`
    says when more were found).

    Classification, per entry (``anchor`` = the last entry before it that is not an insertion):

    * a gap in the sequence: the missing sequences were ``deleted``;
    * stored after the entry the head names: ``inserted``;
    * signature does not match the content: ``inserted`` when the next entry links past it to the
      anchor, else ``modified`` (content or signature edited);
    * signature matches but it does not link to the anchor: explained by a gap or a reorder already
      reported, else ``reordered`` when the entry it links to is stored elsewhere, else ``deleted``
      (its predecessor is gone and the sequence was renumbered).

    At the end, the head: its MAC (``head``), entries missing after the last one (``deleted``), a last
    entry that is not the one the head names (``modified``).
    """

    def __init__(
        self,
        key: bytes,
        tenant_id: str,
        head: ChainHead | None,
        locate: Locate,
        max_findings: int = 100,
    ) -> None:
        self._key = key
        self._tenant_id = tenant_id
        self._head = head
        self._locate = locate
        self._max_findings = max_findings
        self._findings: list[Finding] = []
        self._truncated = False
        self._checked = 0
        self._pending: ChainRow | None = None
        self._prev: _Seen | None = None
        self._anchor: _Seen | None = None
        self._head_row: _Seen | None = None
        self._moved: set[str] = set()

    def feed(self, row: ChainRow) -> None:
        """Add the next stored row (ascending sequence)."""
        if self._pending is not None:
            self._check(self._pending, row)
        self._pending = row

    def finish(self) -> Report:
        if self._pending is not None:
            self._check(self._pending, None)
            self._pending = None
        self._check_head()
        head = self._head
        return Report(
            tenant_id=self._tenant_id,
            intact=not self._findings and not self._truncated,
            checked=self._checked,
            head_sequence=None if head is None else head.sequence,
            head_signature=None if head is None else head.signature,
            findings=tuple(self._findings),
            truncated=self._truncated,
        )

    # -- internals

    def _add(self, finding: Finding) -> None:
        if len(self._findings) >= self._max_findings:
            self._truncated = True
            return
        self._findings.append(finding)

    def _past_head(self) -> str | None:
        """Why rows fed now lie beyond the end of the chain (None while they do not)."""
        if self._head_row is not None:
            return f"the last entry of the chain (sequence {self._head_row.sequence}, named by the chain head)"
        if self._head is not None and self._head.sequence == 0:
            return "the chain head, which records an empty chain"
        return None

    def _check(self, row: ChainRow, following: ChainRow | None) -> None:
        self._checked += 1
        expected = sign(self._key, row)
        authentic = hmac.compare_digest(expected, row.signature)
        seen = _Seen(row.sequence, row.id, row.signature, expected)
        prev, anchor = self._prev, self._anchor
        self._prev = seen
        where = f"entry {row.id} at sequence {row.sequence}"

        beyond = self._past_head()
        if beyond is not None:
            self._add(Finding("inserted", f"{where} is stored after {beyond}: inserted", row.sequence, None, row.id))
            return

        expected_sequence = 1 if prev is None else prev.sequence + 1
        gap = row.sequence > expected_sequence
        if gap:
            after = "the start of the chain" if prev is None else f"entry {prev.id} (sequence {prev.sequence})"
            self._add(
                Finding(
                    "deleted",
                    f"{_entries(expected_sequence, row.sequence - 1)} missing: deleted between {after} and {where}",
                    expected_sequence,
                    row.sequence - 1,
                )
            )

        targets = (GENESIS,) if anchor is None else (anchor.signature, anchor.expected)
        if not authentic:
            if following is not None and following.prev_signature in targets:
                # The next entry links past this one to the entry before it: this one was slipped in.
                self._add(
                    Finding(
                        "inserted",
                        f"{where} does not match its signature and the next entry (sequence "
                        f"{following.sequence}) links past it: inserted",
                        row.sequence,
                        None,
                        row.id,
                    )
                )
                return
            self._add(
                Finding(
                    "modified",
                    f"{where}: its content does not match its signature: modified",
                    row.sequence,
                    None,
                    row.id,
                )
            )
        elif row.prev_signature not in targets and not gap and not self._explained(row, prev):
            self._explain_broken_link(row, where)

        self._anchor = seen
        head = self._head
        if head is not None and head.sequence > 0 and head.signature in (row.signature, expected):
            self._head_row = seen

    def _explained(self, row: ChainRow, prev: _Seen | None) -> bool:
        """A broken link next to an entry already reported as moved is part of that reorder."""
        return row.id in self._moved or (prev is not None and prev.id in self._moved)

    def _explain_broken_link(self, row: ChainRow, where: str) -> None:
        if self._truncated:
            return
        target = self._locate(row.prev_signature)
        if target is None:
            self._add(
                Finding(
                    "deleted",
                    f"{where} follows an entry that is no longer stored: the entry before it was deleted "
                    "(and the later entries renumbered)",
                    row.sequence,
                    entry_id=row.id,
                )
            )
            return
        self._moved.update((row.id, target.entry_id))
        self._add(
            Finding(
                "reordered",
                f"{where} belongs right after entry {target.entry_id}, which is stored at sequence "
                f"{target.sequence}: reordered",
                row.sequence,
                entry_id=row.id,
            )
        )

    def _check_head(self) -> None:
        head, last = self._head, self._anchor
        if head is None:
            if self._checked:
                self._add(Finding("head", "the chain head record is missing"))
            return
        if not hmac.compare_digest(head_mac(self._key, self._tenant_id, head.sequence, head.signature), head.mac):
            self._add(
                Finding(
                    "head",
                    f"the chain head record (sequence {head.sequence}) does not match its MAC: altered",
                    head.sequence,
                )
            )
        if head.sequence == 0 or self._head_row is not None:
            row = self._head_row
            if row is not None and row.sequence != head.sequence and not self._findings:
                self._add(
                    Finding(
                        "reordered",
                        f"the last entry {row.id} is stored at sequence {row.sequence} "
                        f"but the chain head records sequence {head.sequence}: renumbered",
                        row.sequence,
                        entry_id=row.id,
                    )
                )
            return
        if last is None:
            self._add(
                Finding(
                    "deleted",
                    f"all entries (sequence 1..{head.sequence}) are missing: deleted",
                    1,
                    head.sequence,
                )
            )
        elif last.sequence < head.sequence:
            self._add(
                Finding(
                    "deleted",
                    f"{_entries(last.sequence + 1, head.sequence)} missing from the end of the chain "
                    f"(the head records sequence {head.sequence}): deleted",
                    last.sequence + 1,
                    head.sequence,
                )
            )
        elif not any(f.entry_id == last.id for f in self._findings):
            self._add(
                Finding(
                    "modified",
                    f"the last entry {last.id} (sequence {last.sequence}) is not the entry the chain head names: "
                    "replaced",
                    last.sequence,
                    entry_id=last.id,
                )
            )
