"""SIEM message bodies (CEF, LEEF, JSON), the RFC 5424 envelope, and how audit entries become events."""

from __future__ import annotations

import json
import re

from agentgov.siem import formats
from agentgov.siem.events import SiemEvent, from_audit_entry, login_failure
from agentgov.storage.audit import AuditEntry


def _event(**overrides) -> SiemEvent:
    values = dict(
        event_id="e-1",
        tenant_id="t-1",
        name="policy.denied",
        severity=7,
        occurred_at="2026-01-02T03:04:05.123456Z",
        summary="denied: a|b = c\nnext line",
        request_id="req-1",
        outcome="denied",
        actor="key:abc",
        agent_id="agent-1",
        action="db.write",
        resource="db://orders",
        details={"reason": "x=y", "tab": "a\tb"},
    )
    values.update(overrides)
    return SiemEvent(**values)


def _cef_extension(text: str) -> dict[str, str]:
    """Parse a CEF extension the way a SIEM does: keys are `word=`, values run to the next unescaped key."""
    header_parts = re.split(r"(?<!\\)\|", text, maxsplit=7)
    extension = header_parts[7]
    pairs = re.findall(r"(\w+)=((?:\\=|[^=])*?)(?= \w+=|$)", extension)
    return {k: v.replace("\\=", "=").replace("\\n", "\n").replace("\\\\", "\\") for k, v in pairs}


def test_cef_escapes_header_pipes_and_extension_equals_and_newlines() -> None:
    text = formats.cef(_event())
    assert "\n" not in text
    header = re.split(r"(?<!\\)\|", text, maxsplit=7)
    assert header[:5] == ["CEF:0", "agentgov", "agentgov", header[3], "policy.denied"]
    assert header[5] == "denied: a\\|b = c next line" and header[6] == "7"
    ext = _cef_extension(text)
    assert ext["externalId"] == "e-1" and ext["cs1Label"] == "tenantId" and ext["cs1"] == "t-1"
    assert ext["cs2"] == "req-1" and ext["suser"] == "key:abc" and ext["outcome"] == "denied"
    assert ext["msg"] == "denied: a|b = c\nnext line"
    assert json.loads(ext["cs5"]) == {"reason": "x=y", "tab": "a\tb"}
    assert ext["rt"] == "1767323045123"


def test_cef_leaves_out_empty_slots_but_keeps_their_numbers() -> None:
    ext = _cef_extension(formats.cef(_event(request_id=None, agent_id=None, details={})))
    assert "cs2" not in ext and "cs3" not in ext and "cs5" not in ext
    assert ext["cs4Label"] == "resource" and ext["cs4"] == "db://orders"


def test_leef_is_tab_delimited_with_tabs_and_newlines_in_values_escaped() -> None:
    text = formats.leef(_event())
    parts = text.split("|", 6)  # LEEF:2.0|vendor|product|version|event id|delimiter|attributes
    assert parts[:3] == ["LEEF:2.0", "agentgov", "agentgov"] and parts[4:6] == ["policy.denied", "x09"]
    attributes = parts[6]
    pairs = dict(item.split("=", 1) for item in attributes.split("\t"))
    assert pairs["sev"] == "7" and pairs["eventId"] == "e-1" and pairs["tenantId"] == "t-1"
    assert pairs["msg"] == "denied: a|b = c\\nnext line" and pairs["cat"] == "policy"
    assert json.loads(pairs["details"])["tab"] == "a\tb"  # JSON escapes the tab: no attribute is split
    assert formats.leef(_event(summary="a\tb")).count("\t") == attributes.count("\t")  # a raw tab is replaced
    assert pairs["devTime"] == "1767323045123"


def test_json_body_is_the_whole_event() -> None:
    event = _event()
    data = json.loads(formats.json_body(event))
    assert {k: data[k] for k in event.to_dict()} == event.to_dict()
    assert data["vendor"] == "agentgov"


def test_rfc5424_envelope() -> None:
    event = _event(tenant_id='t"1]', request_id="r\\1")
    line = formats.rfc5424(event, "BODY", facility=13)
    match = re.fullmatch(r"<(\d+)>1 (\S+) (\S+) agentgov (\d+) (\S+) (\[.*\]) BODY", line)
    assert match, line
    assert int(match[1]) == 13 * 8 + 3  # severity 7 -> syslog error (3)
    assert match[2] == event.occurred_at and match[5] == "policy.denied"
    assert match[6] == '[agentgov@32473 tenantId="t\\"1\\]" eventId="e-1" requestId="r\\\\1"]'


def test_syslog_severity_scale() -> None:
    assert [formats.syslog_severity(s) for s in (0, 2, 3, 5, 7, 9, 10)] == [6, 6, 5, 4, 3, 2, 2]


def _entry(**overrides) -> AuditEntry:
    values = dict(
        id="entry-1",
        tenant_id="t-1",
        sequence=4,
        kind="policy_check",
        agent_id="agent-1",
        actor="key:abc",
        action="db.write",
        resource="db://orders",
        input=None,
        output=None,
        reasoning=None,
        risk_score=0.4,
        is_approved=False,
        decision=json.dumps({"allowed": False, "required_approval": False, "reason": "forbidden"}),
        dedup_key=None,
        created_at="2026-01-02T03:04:05.000000Z",
        prev_signature="p",
        signature="s",
        request_id="req-9",
    )
    values.update(overrides)
    return AuditEntry(**values)


def test_audit_entries_become_named_events_with_their_id_and_request() -> None:
    denied = from_audit_entry(_entry())
    assert (denied.name, denied.severity, denied.outcome) == ("policy.denied", 7, "denied")
    assert denied.event_id == "entry-1" and denied.request_id == "req-9" and "forbidden" in denied.summary
    allowed = from_audit_entry(_entry(decision=json.dumps({"allowed": True, "required_approval": False})))
    assert (allowed.name, allowed.outcome) == ("policy.allowed", "allowed")
    pending = from_audit_entry(_entry(decision=json.dumps({"allowed": True, "required_approval": True})))
    assert pending.name == "policy.approval_required"
    guard = from_audit_entry(
        _entry(kind="guard", decision=None, output=json.dumps({"category": "injection"}), input='{"sha256":"x"}')
    )
    assert (guard.name, guard.severity) == ("guard.blocked", 8) and "injection" in guard.summary
    action = from_audit_entry(_entry(kind="action", decision=None, occurred_at="2025-12-31T00:00:00.000000Z"))
    assert action.name == "audit.action" and action.occurred_at == "2025-12-31T00:00:00.000000Z"
    flagged = from_audit_entry(_entry(kind="action", decision=None, anomaly=json.dumps({"is_anomaly": True})))
    assert flagged.severity == 6 and flagged.details["anomaly"] == {"is_anomaly": True}


def test_login_failure_event() -> None:
    event = login_failure("", "who@example.com", "10.0.0.1", "throttled")
    assert event.name == "auth.login_failed" and event.tenant_id == "" and event.severity == 7
    assert event.details == {"reason": "throttled", "client_address": "10.0.0.1"}
    assert SiemEvent.from_json(event.to_json()) == event
