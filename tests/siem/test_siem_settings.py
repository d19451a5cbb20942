"""`SIEM_*` settings: forwarding is off by default; every bad value is refused naming its setting."""

from __future__ import annotations

import pytest

from agentgov.config import ConfigError, Settings


def _siem(**env: str):
    return Settings.from_env(env).siem


def test_off_by_default() -> None:
    siem = _siem()
    assert not siem.enabled and siem.destination == ""


def test_syslog_defaults_per_transport() -> None:
    assert _siem(SIEM_TRANSPORT="syslog-tcp", SIEM_HOST="siem.local").port == 514
    tls = _siem(SIEM_TRANSPORT="syslog-tls", SIEM_HOST="siem.local")
    assert tls.port == 6514 and tls.format == "cef" and tls.destination == "siem.local:6514"


def test_hec_destination_hides_credentials() -> None:
    siem = _siem(SIEM_TRANSPORT="splunk-hec", SIEM_URL="https://user:pw@splunk:8088/?x=1", SIEM_TOKEN="t0k")
    assert siem.destination == "https://splunk:8088/" and "pw" not in siem.destination and "t0k" not in siem.destination


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"SIEM_TRANSPORT": "kafka"}, "SIEM_TRANSPORT"),
        ({"SIEM_TRANSPORT": "syslog-udp"}, "SIEM_HOST"),
        ({"SIEM_TRANSPORT": "syslog-udp", "SIEM_HOST": "h", "SIEM_FORMAT": "xml"}, "SIEM_FORMAT"),
        ({"SIEM_TRANSPORT": "syslog-udp", "SIEM_HOST": "h", "SIEM_PORT": "70000"}, "SIEM_PORT"),
        ({"SIEM_TRANSPORT": "syslog-udp", "SIEM_HOST": "h", "SIEM_PORT": "x"}, "SIEM_PORT"),
        ({"SIEM_TRANSPORT": "syslog-tcp", "SIEM_HOST": "bad host name!"}, "SIEM_HOST"),
        ({"SIEM_TRANSPORT": "syslog-tcp", "SIEM_HOST": "-leading.example"}, "SIEM_HOST"),
        ({"SIEM_TRANSPORT": "syslog-tcp", "SIEM_HOST": "a" * 64 + ".example"}, "SIEM_HOST"),
        ({"SIEM_TRANSPORT": "syslog-tls", "SIEM_HOST": "h", "SIEM_TLS_CA": "/nonexistent.pem"}, "SIEM_TLS_CA"),
        ({"SIEM_TRANSPORT": "splunk-hec", "SIEM_TOKEN": "t"}, "SIEM_URL"),
        ({"SIEM_TRANSPORT": "splunk-hec", "SIEM_URL": "https://s:8088"}, "SIEM_TOKEN"),
        ({"SIEM_TRANSPORT": "syslog-tcp", "SIEM_HOST": "h", "SIEM_BATCH_SIZE": "0"}, "SIEM_BATCH_SIZE"),
        ({"SIEM_TRANSPORT": "syslog-tcp", "SIEM_HOST": "h", "SIEM_OUTBOX_MAX": "-5"}, "SIEM_OUTBOX_MAX"),
        ({"SIEM_TRANSPORT": "syslog-tcp", "SIEM_HOST": "h", "SIEM_SYSLOG_FACILITY": "24"}, "SIEM_SYSLOG_FACILITY"),
    ],
)
def test_bad_settings_are_refused_by_name(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        Settings.from_env(env)


@pytest.mark.parametrize(
    ("host", "kept"),
    [
        ("siem.example.com", "siem.example.com"),
        ("localhost", "localhost"),
        ("siem_collector", "siem_collector"),  # a compose service name
        ("127.0.0.1", "127.0.0.1"),
        ("::1", "::1"),
        ("[::1]", "::1"),
        ("collector-2.", "collector-2."),
    ],
)
def test_host_names_and_addresses_are_taken(host: str, kept: str) -> None:
    assert Settings.from_env({"SIEM_TRANSPORT": "syslog-tcp", "SIEM_HOST": host}).siem.host == kept
