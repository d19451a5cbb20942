"""The SIEM receivers of tests/support work, driven by plain senders written here.

rsyslog (tests/support/rsyslog.py) is fed by hand-made UDP datagrams, octet-counted TCP frames and TLS
connections; the Splunk HEC emulator (tests/support/splunk_hec.py) by raw HTTP requests. A failure here
points at a receiver, not at the forwarder built on top of them.
"""

from __future__ import annotations

import base64
import gzip
import json
import ssl
from pathlib import Path

import httpx
import pytest
import trio

from tests.support.rsyslog import RsyslogReceiver, rsyslogd_path, skip_reason
from tests.support.splunk_hec import splunk_hec_server

needs_rsyslogd = pytest.mark.skipif(rsyslogd_path() is None, reason=skip_reason)

MSG_1 = '<134>1 2024-05-01T12:00:00.000Z agent-host agentgov 4242 audit [meta@32473 tenant="acme"] first'
MSG_2 = "<134>1 2024-05-01T12:00:01.000Z agent-host agentgov 4242 audit - \ufeffsecond \u00e9t\u00e9"


def octet_counted(*messages: str) -> bytes:
    """RFC 6587 octet-counting framing: ``<byte length> <message>`` for each message, back to back."""
    frames = []
    for message in messages:
        data = message.encode()
        frames.append(b"%d %s" % (len(data), data))
    return b"".join(frames)


async def send_tcp(receiver: RsyslogReceiver, payload: bytes) -> None:
    stream = await trio.open_tcp_stream(receiver.host, receiver.port)
    async with stream:
        await stream.send_all(payload)


async def send_tls(receiver: RsyslogReceiver, payload: bytes) -> None:
    context = ssl.create_default_context(cafile=str(receiver.ca_file))  # verifies chain and host name
    tcp = await trio.open_tcp_stream(receiver.host, receiver.port)
    stream = trio.SSLStream(tcp, context, server_hostname="localhost")
    try:
        await stream.do_handshake()
        await stream.send_all(payload)
    finally:
        await stream.aclose()


# -- rsyslog ---------------------------------------------------------------------------------------------


@needs_rsyslogd
async def test_rsyslog_udp_datagrams_are_written_whole(tmp_path: Path) -> None:
    async with RsyslogReceiver(tmp_path / "rsyslog", "udp") as receiver:
        assert receiver.host == "127.0.0.1"
        assert receiver.messages() == []  # the readiness probes are not messages
        with trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM) as sock:
            await sock.sendto(MSG_1.encode(), (receiver.host, receiver.port))
            await sock.sendto(MSG_2.encode() + b"\n", (receiver.host, receiver.port))  # trailing LF dropped
        messages = await receiver.await_messages(2)
    assert sorted(messages) == sorted([MSG_1, MSG_2])


@needs_rsyslogd
async def test_rsyslog_tcp_strips_octet_counting_and_keeps_one_message_per_line(tmp_path: Path) -> None:
    async with RsyslogReceiver(tmp_path / "rsyslog", "tcp") as receiver:
        multiline = "<14>1 - host app - - - line one\nline two"
        await send_tcp(receiver, octet_counted(MSG_1, MSG_2, multiline))  # three frames in one send
        messages = await receiver.await_messages(3)
    assert messages == [MSG_1, MSG_2, "<14>1 - host app - - - line one#012line two"]


@needs_rsyslogd
async def test_rsyslog_tcp_accepts_newline_framing_too(tmp_path: Path) -> None:
    async with RsyslogReceiver(tmp_path / "rsyslog", "tcp") as receiver:
        await send_tcp(receiver, f"{MSG_1}\n{MSG_2}\n".encode())
        assert await receiver.await_messages(2) == [MSG_1, MSG_2]


@needs_rsyslogd
async def test_rsyslog_tls_with_the_generated_ca(tmp_path: Path) -> None:
    async with RsyslogReceiver(tmp_path / "rsyslog", "tls") as receiver:
        assert receiver.ca_file.read_text().startswith("-----BEGIN CERTIFICATE-----")
        await send_tls(receiver, octet_counted(MSG_1, MSG_2))
        assert await receiver.await_messages(2) == [MSG_1, MSG_2]

        # The certificate is only trusted through the receiver's CA.
        untrusting = ssl.create_default_context()
        tcp = await trio.open_tcp_stream(receiver.host, receiver.port)
        stream = trio.SSLStream(tcp, untrusting, server_hostname="localhost")
        with pytest.raises(trio.BrokenResourceError) as failure:
            await stream.do_handshake()
        assert isinstance(failure.value.__cause__, ssl.SSLCertVerificationError)
        await tcp.aclose()


@needs_rsyslogd
def test_rsyslog_sync_api_and_ca_file_only_for_tls(tmp_path: Path) -> None:
    receiver = RsyslogReceiver(tmp_path / "rsyslog", "tcp")
    with pytest.raises(ValueError, match="only transport='tls'"):
        _ = receiver.ca_file
    with receiver:
        assert receiver.running
        import socket

        with socket.create_connection((receiver.host, receiver.port)) as sock:
            sock.sendall(octet_counted(MSG_1))
        assert receiver.wait_for(lambda lines: MSG_1 in lines, timeout=5) == [MSG_1]
        with pytest.raises(TimeoutError, match="did not receive 2 messages"):
            receiver.wait_for(2, timeout=0.2)
    assert not receiver.running
    assert receiver.messages() == [MSG_1]  # still readable after stop


@needs_rsyslogd
@pytest.mark.parametrize("transport", ["udp", "tcp", "tls"])
async def test_rsyslog_restarts_on_the_same_port(tmp_path: Path, transport: str) -> None:
    async with RsyslogReceiver(tmp_path / "rsyslog", transport) as receiver:  # type: ignore[arg-type]
        port = receiver.port

        async def send(message: str) -> None:
            if transport == "udp":
                with trio.socket.socket(trio.socket.AF_INET, trio.socket.SOCK_DGRAM) as sock:
                    await sock.sendto(message.encode(), (receiver.host, receiver.port))
            elif transport == "tcp":
                await send_tcp(receiver, octet_counted(message))
            else:
                await send_tls(receiver, octet_counted(message))

        # A TCP client connected across the restart sees its connection closed.
        held = await trio.open_tcp_stream(receiver.host, receiver.port) if transport == "tcp" else None

        await send(MSG_1)
        await receiver.await_messages(1)
        await receiver.astop()
        assert not receiver.running
        if transport != "udp":
            with pytest.raises(OSError):
                await trio.open_tcp_stream(receiver.host, port)  # a real outage: connection refused
        if held is not None:
            with trio.fail_after(5):
                assert await held.receive_some() == b""
            await held.aclose()

        await receiver.arestart_on_same_port()
        assert receiver.running
        assert receiver.port == port
        await send(MSG_2)
        assert await receiver.await_messages(2) == [MSG_1, MSG_2]


# -- Splunk HEC --------------------------------------------------------------------------------------------

TOKEN = "6b2d1c1e-3f7a-4c55-9d0e-1a2b3c4d5e6f"


def splunk(token: str = TOKEN) -> dict[str, str]:
    return {"Authorization": f"Splunk {token}"}


@pytest.mark.parametrize("path", ["/services/collector/event", "/services/collector", "/services/collector/event/1.0"])
async def test_hec_accepts_concatenated_events(path: str) -> None:
    async with splunk_hec_server(token=TOKEN) as hec, httpx.AsyncClient(base_url=hec.url) as client:
        assert hec.url == f"http://127.0.0.1:{hec.port}"
        assert hec.token == TOKEN
        first = {"time": 1714564800.5, "host": "agent-host", "sourcetype": "agentgov:audit", "event": {"a": 1}}
        second = {"event": "plain text", "fields": {"tenant": "acme"}}
        body = json.dumps(first) + "\n" + json.dumps(second) + json.dumps({"event": 3})  # with and without space
        response = await client.post(path, content=body, headers=splunk())
        assert (response.status_code, response.json()) == (200, {"text": "Success", "code": 0})
        assert response.headers["content-type"].startswith("application/json")
        assert hec.events == [first, second, {"event": 3}]
        assert hec.requests == 1
        assert hec.exchanges[0].body == body.encode()


async def test_hec_accepts_gzip_and_basic_auth() -> None:
    async with splunk_hec_server(token=TOKEN) as hec, httpx.AsyncClient(base_url=hec.url) as client:
        compressed = gzip.compress(b'{"event": "zipped"}')
        response = await client.post(
            "/services/collector/event", content=compressed, headers={**splunk(), "Content-Encoding": "gzip"}
        )
        assert response.json() == {"text": "Success", "code": 0}
        basic = base64.b64encode(f"anyone:{TOKEN}".encode()).decode()
        response = await client.post(
            "/services/collector/event", content=b'{"event": "basic"}', headers={"Authorization": f"Basic {basic}"}
        )
        assert response.json() == {"text": "Success", "code": 0}
        assert [event["event"] for event in hec.events] == ["zipped", "basic"]


@pytest.mark.parametrize(
    ("headers", "body", "status", "answer"),
    [
        ({}, b'{"event": "x"}', 401, {"text": "Token is required", "code": 2}),
        ({"Authorization": TOKEN}, b'{"event": "x"}', 401, {"text": "Invalid authorization", "code": 3}),
        ({"Authorization": f"Bearer {TOKEN}"}, b'{"event": "x"}', 401, {"text": "Invalid authorization", "code": 3}),
        ({"Authorization": "Splunk"}, b'{"event": "x"}', 401, {"text": "Invalid authorization", "code": 3}),
        (splunk("wrong-token"), b'{"event": "x"}', 403, {"text": "Invalid token", "code": 4}),
        (splunk("wrong-token"), b"", 403, {"text": "Invalid token", "code": 4}),  # authentication comes first
        (splunk(), b"", 400, {"text": "No data", "code": 5}),
        (splunk(), b" \n ", 400, {"text": "No data", "code": 5}),
        (splunk(), b"not json", 400, {"text": "Invalid data format", "code": 6, "invalid-event-number": 0}),
        (
            splunk(),
            b'{"event": "ok"} {"event": ',
            400,
            {"text": "Invalid data format", "code": 6, "invalid-event-number": 1},
        ),
        (splunk(), b'[{"event": "x"}]', 400, {"text": "Invalid data format", "code": 6, "invalid-event-number": 0}),
        (splunk(), b'"x"', 400, {"text": "Invalid data format", "code": 6, "invalid-event-number": 0}),
        (
            splunk(),
            b'{"event": "ok"}{"time": 1}',
            400,
            {"text": "Event field is required", "code": 12, "invalid-event-number": 1},
        ),
        (
            splunk(),
            b'{"event": ""}',
            400,
            {"text": "Event field cannot be blank", "code": 13, "invalid-event-number": 0},
        ),
        (
            splunk(),
            b'{"event": null}',
            400,
            {"text": "Event field cannot be blank", "code": 13, "invalid-event-number": 0},
        ),
    ],
)
async def test_hec_documented_errors(headers: dict[str, str], body: bytes, status: int, answer: dict) -> None:
    async with splunk_hec_server(token=TOKEN) as hec, httpx.AsyncClient(base_url=hec.url) as client:
        response = await client.post("/services/collector/event", content=body, headers=headers)
        assert (response.status_code, response.json()) == (status, answer)
        assert hec.events == []  # a rejected request keeps none of its events
        assert hec.requests == 1
        assert hec.exchanges[0].status == status


async def test_hec_unknown_path_and_health() -> None:
    async with splunk_hec_server(token=TOKEN) as hec, httpx.AsyncClient(base_url=hec.url) as client:
        response = await client.post("/services/collector/raw", content=b"x", headers=splunk())
        assert response.status_code == 404
        response = await client.get("/services/collector/event", headers=splunk())
        assert response.status_code == 405
        response = await client.get("/services/collector/health")
        assert (response.status_code, response.json()) == (200, {"text": "HEC is healthy", "code": 17})
        hec.available = False
        response = await client.get("/services/collector/health")
        assert response.status_code == 503
        assert hec.requests == 4


async def test_hec_busy_then_real_outage_then_back_on_the_same_port() -> None:
    async with splunk_hec_server(token=TOKEN) as hec, httpx.AsyncClient(base_url=hec.url) as client:
        hec.available = False
        response = await client.post("/services/collector/event", content=b'{"event": "busy"}', headers=splunk())
        assert (response.status_code, response.json()) == (503, {"text": "Server is busy", "code": 9})
        hec.available = True
        response = await client.post("/services/collector/event", content=b'{"event": "one"}', headers=splunk())
        assert response.status_code == 200  # on the same keep-alive connection

        port = hec.port
        await hec.stop()
        assert not hec.running
        with pytest.raises(httpx.ConnectError):
            await client.post("/services/collector/event", content=b'{"event": "lost"}', headers=splunk())
        await hec.stop()  # idempotent

        await hec.start()
        assert hec.port == port
        response = await client.post("/services/collector/event", content=b'{"event": "two"}', headers=splunk())
        assert response.status_code == 200
        assert [event["event"] for event in hec.events] == ["one", "two"]
        assert hec.requests == 3
    assert not hec.running
