"""The pure chain: signing, key derivation and the verifier's classification of each kind of tampering."""

from __future__ import annotations

import dataclasses

import pytest

from agentgov.audit_chain import (
    GENESIS,
    ChainHead,
    ChainRow,
    ChainVerifier,
    Located,
    Report,
    canonical,
    canonical_json,
    derive_key,
    extend,
    genesis_head,
    key_check,
    make_head,
    sign,
)

TENANT = "tenant-1"
KEY = derive_key("server-secret-0123456789", TENANT, "salt")


def _row(i: int) -> ChainRow:
    return ChainRow(
        tenant_id=TENANT,
        id=f"entry-{i}",
        sequence=0,
        created_at=f"2026-01-01T00:00:{i:02d}.000000Z",
        kind="action",
        agent_id="agent-1",
        actor="key:k1",
        action=f"action-{i}",
        resource="db://orders",
        input=canonical_json({"n": i}),
        output=None,
        reasoning=canonical_json(["because"]),
        risk_score=0.25,
        is_approved=True,
        decision=None,
        dedup_key=None,
        prev_signature="",
    )


def chain(n: int = 10) -> tuple[list[ChainRow], ChainHead]:
    return extend(KEY, genesis_head(KEY, TENANT), TENANT, [_row(i) for i in range(1, n + 1)])


def verify(rows: list[ChainRow], head: ChainHead | None, key: bytes = KEY) -> Report:
    ordered = sorted(rows, key=lambda r: r.sequence)
    by_signature = {r.signature: r for r in ordered}

    def locate(signature: str) -> Located | None:
        row = by_signature.get(signature)
        return None if row is None else Located(row.sequence, row.id)

    verifier = ChainVerifier(key, TENANT, head, locate)
    for row in ordered:
        verifier.feed(row)
    return verifier.finish()


def only(report: Report) -> tuple[str, int | None, str | None]:
    assert not report.intact
    assert len(report.findings) == 1, report.findings
    finding = report.findings[0]
    return finding.kind, finding.sequence, finding.entry_id


def renumber(rows: list[ChainRow], start: int, delta: int) -> list[ChainRow]:
    return [dataclasses.replace(r, sequence=r.sequence + delta) if r.sequence >= start else r for r in rows]


def test_extend_links_each_entry_to_the_previous_signature() -> None:
    rows, head = chain(3)
    assert [r.sequence for r in rows] == [1, 2, 3]
    assert rows[0].prev_signature == GENESIS
    assert rows[1].prev_signature == rows[0].signature and rows[2].prev_signature == rows[1].signature
    assert head == make_head(KEY, TENANT, 3, rows[2].signature)
    assert all(sign(KEY, r) == r.signature for r in rows)


def test_signature_covers_every_field_but_sequence() -> None:
    rows, _ = chain(1)
    row = rows[0]
    for field in dataclasses.fields(ChainRow):
        if field.name in ("sequence", "signature"):
            continue
        value = getattr(row, field.name)
        changed = "x" if isinstance(value, str) or value is None else (not value if isinstance(value, bool) else 0.5)
        assert sign(KEY, dataclasses.replace(row, **{field.name: changed})) != row.signature, field.name
    assert sign(KEY, dataclasses.replace(row, sequence=99)) == row.signature


def test_canonical_form_is_stable_and_rejects_nan() -> None:
    assert canonical_json({"b": 1, "a": [1.5, "é"]}) == '{"a":[1.5,"é"],"b":1}'
    with pytest.raises(ValueError, match="not representable"):
        canonical_json({"x": float("nan")})
    rows, _ = chain(1)
    with pytest.raises(ValueError):
        canonical(dataclasses.replace(rows[0], risk_score=float("inf")))


def test_keys_differ_per_tenant_salt_and_secret() -> None:
    base = derive_key("secret-a-0123456789", "t1", "s1")
    assert base != derive_key("secret-b-0123456789", "t1", "s1")
    assert base != derive_key("secret-a-0123456789", "t2", "s1")
    assert base != derive_key("secret-a-0123456789", "t1", "s2")
    assert key_check(base) == key_check(derive_key("secret-a-0123456789", "t1", "s1"))


def test_intact_chain_and_empty_chain() -> None:
    rows, head = chain(10)
    report = verify(rows, head)
    assert report.intact and report.checked == 10 and report.head_sequence == 10
    empty = verify([], genesis_head(KEY, TENANT))
    assert empty.intact and empty.checked == 0


def test_modified_content() -> None:
    rows, head = chain()
    rows[4] = dataclasses.replace(rows[4], action="exfiltrate")
    assert only(verify(rows, head)) == ("modified", 5, "entry-5")


def test_modified_signature_column() -> None:
    rows, head = chain()
    rows[4] = dataclasses.replace(rows[4], signature="f" * 64)
    assert only(verify(rows, head)) == ("modified", 5, "entry-5")


def test_modified_last_entry() -> None:
    rows, head = chain()
    rows[-1] = dataclasses.replace(rows[-1], risk_score=0.0)
    assert only(verify(rows, head)) == ("modified", 10, "entry-10")


def test_deleted_in_the_middle() -> None:
    rows, head = chain()
    del rows[4]
    report = verify(rows, head)
    kind, sequence, _ = only(report)
    assert (kind, sequence, report.findings[0].last_sequence) == ("deleted", 5, 5)


def test_deleted_range_then_renumbered() -> None:
    rows, head = chain()
    del rows[3:5]
    rows = renumber(rows, 6, -2)
    assert only(verify(rows, head)) == ("deleted", 4, "entry-6")


def test_deleted_from_the_end() -> None:
    rows, head = chain()
    report = verify(rows[:7], head)
    kind, sequence, _ = only(report)
    assert (kind, sequence, report.findings[0].last_sequence) == ("deleted", 8, 10)


def test_deleted_from_the_end_with_a_forged_head() -> None:
    rows, _ = chain()
    forged = ChainHead(9, rows[8].signature, "0" * 64)
    assert only(verify(rows[:9], forged))[0] == "head"


def test_deleted_first_entry() -> None:
    rows, head = chain()
    assert only(verify(rows[1:], head))[:2] == ("deleted", 1)


def test_inserted_in_the_middle_with_renumbering() -> None:
    rows, head = chain()
    rows = renumber(rows, 4, 1)
    forged = dataclasses.replace(
        _row(99), sequence=4, prev_signature=rows[2].signature, signature="a" * 64, id="forged"
    )
    assert only(verify([*rows, forged], head)) == ("inserted", 4, "forged")


def test_inserted_after_the_head() -> None:
    rows, head = chain()
    forged = dataclasses.replace(_row(99), sequence=11, prev_signature=rows[-1].signature, signature="b" * 64, id="x")
    assert only(verify([*rows, forged], head)) == ("inserted", 11, "x")


def test_inserted_copy_of_a_real_entry_under_a_new_id() -> None:
    rows, head = chain()
    rows = renumber(rows, 6, 1)
    copy = dataclasses.replace(rows[4], sequence=6, id="copy")
    assert only(verify([*rows, copy], head)) == ("inserted", 6, "copy")


def test_two_entries_swapped() -> None:
    rows, head = chain()
    a, b = rows[2], rows[3]
    rows[2], rows[3] = dataclasses.replace(b, sequence=3), dataclasses.replace(a, sequence=4)
    assert only(verify(rows, head)) == ("reordered", 3, "entry-4")


def test_entry_moved_earlier() -> None:
    rows, head = chain()
    moved = rows.pop(7)  # entry-8 goes to sequence 3; entries 3..7 move up by one
    rows = [dataclasses.replace(r, sequence=r.sequence + 1) if 3 <= r.sequence <= 7 else r for r in rows]
    rows.append(dataclasses.replace(moved, sequence=3))
    kind, sequence, entry = only(verify(rows, head))
    assert (kind, sequence, entry) == ("reordered", 3, "entry-8")


def test_head_record_altered() -> None:
    rows, head = chain()
    assert only(verify(rows, dataclasses.replace(head, mac="0" * 64)))[0] == "head"


def test_head_record_missing() -> None:
    rows, _ = chain(3)
    assert only(verify(rows, None))[0] == "head"


def test_wrong_key_flags_everything_but_never_passes() -> None:
    rows, head = chain(3)
    report = verify(rows, head, key=derive_key("another-secret-0123", TENANT, "salt"))
    assert not report.intact


def test_findings_are_capped() -> None:
    rows, head = chain(30)
    rows = [dataclasses.replace(r, action="x") for r in rows]
    ordered = sorted(rows, key=lambda r: r.sequence)
    verifier = ChainVerifier(KEY, TENANT, head, lambda _s: None, max_findings=5)
    for row in ordered:
        verifier.feed(row)
    report = verifier.finish()
    assert len(report.findings) == 5 and report.truncated and not report.intact and report.checked == 30
