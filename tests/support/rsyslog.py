"""A real rsyslog receiver on loopback, for tests of syslog forwarding (UDP, TCP and TLS).

:class:`RsyslogReceiver` writes an rsyslog configuration into a work directory and runs
``rsyslogd -n -f <conf> -i <pidfile>`` (Debian package ``rsyslog``; ``rsyslog-gnutls`` for TLS) as a
subprocess. Every message received on its one input is appended, exactly as received, to a file;
:meth:`RsyslogReceiver.messages` reads it back.

Contract of the output (what tests can assert on):

* One line per received message, in the order rsyslog processed them. The line is rsyslog's
  ``%rawmsg%``: the whole message as the sender framed it, PRI included (``<14>1 2024-... host app``),
  BOM and structured data untouched.
* TCP/TLS framing is removed: an octet-counted frame ``"<len> <msg>"`` is written as ``<msg>``, and the
  trailing LF of a non-transparent (LF-terminated) frame is dropped. On UDP a single trailing LF of the
  datagram is dropped too.
* Control characters inside a message are escaped by rsyslog (``parser.escapeControlCharactersOnReceive``),
  so a message never spans two lines: LF becomes ``#012``, TAB ``#011``, CR ``#015``.
* Messages are written within a few milliseconds of reception (no asynchronous writing, flush at the end
  of every batch). Messages up to 64 KiB are kept whole.
* The lines survive :meth:`RsyslogReceiver.stop`; after a restart new messages are appended, so
  :meth:`RsyslogReceiver.messages` lists everything received by every run.
* Messages arriving on different TCP connections, or over UDP, can be written in any relative order.

Readiness: :meth:`RsyslogReceiver.start` returns only once a probe message, sent the same way a client
would send (a datagram for UDP; an octet-counted frame on a TCP or TLS connection), has travelled all
the way through rsyslog into its own probe file. Probe messages carry a random per-receiver marker and
are diverted by the rsyslog configuration to that separate file, so they never show up in
:meth:`RsyslogReceiver.messages`.

Everything rsyslog writes lives in the work directory: configuration, pid file, rsyslog's work
directory, its own internal messages (``rsyslogd-internal.log``, enabled with
``processInternalMessages="on"`` so nothing goes to the system log, journal or ``/dev/log``) and its
stderr (``rsyslogd.stderr``). No privileged port or path is used; it runs the same as root or not.

TLS (``transport="tls"``): a throwaway CA and a server certificate for ``localhost`` and ``127.0.0.1``
(DNS and IP subject alternative names) are generated with ``cryptography`` into ``<workdir>/tls``. The
input uses rsyslog's GnuTLS driver in server-authentication-only mode (``streamDriver.mode="1"``,
``streamDriver.authMode="anon"``): clients verify the server against :attr:`RsyslogReceiver.ca_file`, and
no client certificate is requested. TLS 1.2 and 1.3 are offered (``gnutlsPriorityString="NORMAL"``).

Typical use::

    pytestmark = pytest.mark.skipif(rsyslogd_path() is None, reason=skip_reason)

    async def test_forwarding(tmp_path):
        with RsyslogReceiver(tmp_path / "rsyslog", "tls") as receiver:
            ...  # point the forwarder at receiver.host, receiver.port, receiver.ca_file
            lines = await receiver.await_messages(2)

:meth:`start`, :meth:`stop` and :meth:`restart_on_same_port` block (up to ~10 s for start, ~5 s for
stop); from trio code running something else concurrently prefer :meth:`astart`, :meth:`astop`,
:meth:`arestart_on_same_port` or ``async with``, which run them in a worker thread.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime
import ipaddress
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

import trio

__all__ = [
    "RsyslogReceiver",
    "RsyslogStartError",
    "Transport",
    "rsyslogd_path",
    "skip_reason",
]

Transport = Literal["udp", "tcp", "tls"]
"""The input rsyslog listens on: plain UDP, plain TCP, or TCP with TLS (RFC 5425)."""

skip_reason = "rsyslogd is not installed (Debian package rsyslog, rsyslog-gnutls for TLS); .ci/run installs it"
"""Reason for ``pytest.mark.skipif(rsyslogd_path() is None, reason=skip_reason)``."""

HOST = "127.0.0.1"

_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 5.0
_PROBE_APP = "rsyslog-receiver-probe"
# What rsyslogd 8.2302 writes to stderr when an input cannot bind (it then runs on without that input).
_BIND_FAILED = re.compile(rb"Could not create (?:tcp|udp) listener")


def rsyslogd_path() -> str | None:
    """Path of the ``rsyslogd`` executable (``$PATH``, then ``/usr/sbin/rsyslogd``), or None if absent."""
    found = shutil.which("rsyslogd")
    if found:
        return found
    fallback = Path("/usr/sbin/rsyslogd")
    if fallback.is_file() and os.access(fallback, os.X_OK):
        return str(fallback)
    return None


class RsyslogStartError(RuntimeError):
    """rsyslogd exited, or did not pass a probe message through, within the start timeout.

    The message includes rsyslogd's stderr and internal log of the failed start.
    """


class _PortTaken(RsyslogStartError, OSError):
    """rsyslogd could not bind its port (it keeps running without the listener, so this is read from stderr)."""


# Receivers whose rsyslogd is running; any left when the interpreter exits (a test that never stopped its
# receiver) are stopped then.
_live: set[RsyslogReceiver] = set()


@atexit.register
def _stop_leftovers() -> None:
    for receiver in list(_live):
        with contextlib.suppress(Exception):
            receiver.stop()


def _free_port(transport: Transport) -> int:
    """A port on 127.0.0.1 that is free for `transport` right now (chosen by the kernel)."""
    kind = socket.SOCK_DGRAM if transport == "udp" else socket.SOCK_STREAM
    with socket.socket(socket.AF_INET, kind) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _quoted(path: Path) -> str:
    """`path` as a RainerScript string literal."""
    text = str(path)
    if '"' in text or "\\" in text or "\n" in text:
        raise ValueError(f"rsyslog work paths cannot contain quotes, backslashes or newlines: {text!r}")
    return f'"{text}"'


def _write_tls_material(directory: Path) -> tuple[Path, Path, Path]:
    """Generate a CA and a server certificate for localhost / 127.0.0.1 signed by it.

    Returns (ca_file, cert_file, key_file), all PEM; the key is unencrypted PKCS#8 and readable only by the
    owner. Both certificates are valid from an hour ago for seven days.
    """
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    not_before, not_after = now - datetime.timedelta(hours=1), now + datetime.timedelta(days=7)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "rsyslog test receiver CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address(HOST))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )

    ca_file, cert_file, key_file = directory / "ca.pem", directory / "server.pem", directory / "server-key.pem"
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(server_cert.public_bytes(serialization.Encoding.PEM))
    key_file.touch(mode=0o600)
    key_file.write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return ca_file, cert_file, key_file


def _complete_lines(path: Path) -> list[str]:
    """The newline-terminated lines of `path` (a line still being written is left out); [] if absent."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    end = data.rfind(b"\n")
    if end < 0:
        return []
    return data[:end].decode("utf-8", errors="replace").split("\n")


MessagesPredicate = Callable[[list[str]], bool]
"""A condition on the list of received messages, for :meth:`RsyslogReceiver.wait_for`."""


class RsyslogReceiver:
    """One rsyslogd with one input (`transport`) on 127.0.0.1 and a free high port, writing to a file.

    Construction only prepares `workdir` (created if missing; configuration, and certificates for TLS) and
    chooses the port; :meth:`start` (or ``with``) runs rsyslogd. The port stays the same for the
    receiver's lifetime, so :meth:`stop` then :meth:`start` (:meth:`restart_on_same_port`) brings rsyslog
    back where a client configured with :attr:`port` will reconnect to it. Not thread-safe: drive one
    receiver from one thread (or trio task) at a time.
    """

    def __init__(self, workdir: Path, transport: Transport) -> None:
        if transport not in ("udp", "tcp", "tls"):
            raise ValueError(f"transport must be 'udp', 'tcp' or 'tls', not {transport!r}")
        self.workdir = Path(workdir).resolve()
        self.transport: Transport = transport
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config_file = self.workdir / "rsyslog.conf"
        self.pid_file = self.workdir / "rsyslogd.pid"
        self.spool_dir = self.workdir / "spool"
        self.output_file = self.workdir / "messages.log"
        """Where received messages are appended, one per line (see the module's contract)."""
        self.probe_file = self.workdir / "probes.log"
        self.internal_log = self.workdir / "rsyslogd-internal.log"
        self.stderr_file = self.workdir / "rsyslogd.stderr"
        self.spool_dir.mkdir(exist_ok=True)
        self._marker = f"{_PROBE_APP}-{secrets.token_hex(8)}"
        self._starts = 0
        self._ever_started = False
        self._stderr_offset = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._ca_file: Path | None = None
        self._cert_file: Path | None = None
        self._key_file: Path | None = None
        if transport == "tls":
            self._ca_file, self._cert_file, self._key_file = _write_tls_material(self.workdir / "tls")
        self._port = _free_port(transport)
        self.config_file.write_text(self._config())

    # -- properties -------------------------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The address rsyslog listens on: always ``"127.0.0.1"``."""
        return HOST

    @property
    def port(self) -> int:
        """The port rsyslog listens on (UDP for ``"udp"``, TCP otherwise); fixed for the receiver's life."""
        return self._port

    @property
    def ca_file(self) -> Path:
        """PEM file of the CA that signed the server certificate (TLS only; ValueError otherwise)."""
        if self._ca_file is None:
            raise ValueError(f"a {self.transport} receiver has no CA file; only transport='tls' has one")
        return self._ca_file

    @property
    def running(self) -> bool:
        """Whether the rsyslogd process of the last :meth:`start` is still alive."""
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """Process id of the running rsyslogd, or None."""
        return self._process.pid if self.running and self._process is not None else None

    # -- configuration ----------------------------------------------------------------------------------

    def _config(self) -> str:
        common = 'flushOnTXEnd="on" asyncWriting="off" ioBufferSize="4k"'
        if self.transport == "udp":
            module = 'module(load="imudp")'
            listener = f'input(type="imudp" address="{HOST}" port="{self._port}" ruleset="receive")'
        else:
            module = 'module(load="imtcp")'
            tls = ""
            if self.transport == "tls":
                assert self._ca_file and self._cert_file and self._key_file
                tls = (
                    '\n      streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon"'
                    f"\n      streamDriver.CAFile={_quoted(self._ca_file)}"
                    f"\n      streamDriver.CertFile={_quoted(self._cert_file)}"
                    f"\n      streamDriver.KeyFile={_quoted(self._key_file)}"
                    '\n      gnutlsPriorityString="NORMAL"'
                )
            listener = (
                f'input(type="imtcp" address="{HOST}" port="{self._port}" ruleset="receive"'
                f'\n      supportOctetCountedFraming="on"{tls})'
            )
        return f"""\
# Written by tests/support/rsyslog.py for one test receiver; everything stays in {self.workdir}.
global(
  workDirectory={_quoted(self.spool_dir)}
  processInternalMessages="on"
  parser.escapeControlCharactersOnReceive="on"
  maxMessageSize="64k"
  net.enableDNS="off"
)

template(name="RawLine" type="string" string="%rawmsg%\\n")

# rsyslog's own messages (start, stop, errors) -- the default ruleset.
action(type="omfile" file={_quoted(self.internal_log)} template="RSYSLOG_FileFormat" {common})

ruleset(name="receive") {{
  # Readiness probes sent by the test harness (random marker): kept out of the message file.
  if ($rawmsg contains "{self._marker}") then {{
    action(type="omfile" file={_quoted(self.probe_file)} template="RawLine" {common})
    stop
  }}
  action(type="omfile" file={_quoted(self.output_file)} template="RawLine" {common})
}}

{module}
{listener}
"""

    # -- lifecycle --------------------------------------------------------------------------------------

    def start(self, timeout: float = _START_TIMEOUT) -> None:
        """Run rsyslogd and return once a probe message has gone through it on :attr:`port`.

        On the very first start only, if rsyslogd reports that the chosen port has been taken meanwhile by
        another process, a new free port is chosen and rsyslogd started again (up to three times). Later
        starts never change :attr:`port`.

        Raises :class:`RsyslogStartError` (with rsyslog's stderr and internal log) if rsyslogd exits, cannot
        bind the port, or the probe has not come through within `timeout` seconds; the process is stopped
        first. Raises RuntimeError if it is already running, FileNotFoundError if rsyslogd is not installed.
        """
        if self.running:
            raise RuntimeError("rsyslogd is already running; stop() it first")
        executable = rsyslogd_path()
        if executable is None:
            raise FileNotFoundError(skip_reason)
        for attempt in range(3):
            try:
                self._start_once(executable, timeout)
            except _PortTaken:
                if self._ever_started or attempt == 2:
                    raise
                # Never started yet, so no client knows the port: take another one.
                self._port = _free_port(self.transport)
                self.config_file.write_text(self._config())
            else:
                self._ever_started = True
                return

    def _start_once(self, executable: str, timeout: float) -> None:
        self._starts += 1
        nonce = f"{self._marker}-{self._starts}-"
        stderr_offset = self.stderr_file.stat().st_size if self.stderr_file.exists() else 0
        internal_offset = self.internal_log.stat().st_size if self.internal_log.exists() else 0
        self._stderr_offset = stderr_offset
        with self.stderr_file.open("ab") as stderr:
            self._process = subprocess.Popen(
                [executable, "-n", "-f", str(self.config_file), "-i", str(self.pid_file)],
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
                cwd=self.workdir,
                start_new_session=True,  # a Ctrl-C meant for pytest does not reach it; stop() does
            )
        _live.add(self)
        deadline = time.monotonic() + timeout
        try:
            self._wait_for_probe(nonce, deadline)
        except BaseException as exc:
            if not isinstance(exc, TimeoutError | OSError):
                self.stop()
                raise
            exited = self._process.poll()
            self.stop()
            error: type[RsyslogStartError]
            if isinstance(exc, _PortTaken):
                error, what = _PortTaken, "could not bind its port"
            elif exited is not None:
                error, what = RsyslogStartError, f"exited with status {exited}"
            else:
                error, what = RsyslogStartError, f"was not ready after {timeout} s ({exc})"
            raise error(
                f"rsyslogd ({self.transport} on {HOST}:{self._port}) {what}"
                + f"\n--- stderr ---\n{self._tail(self.stderr_file, stderr_offset)}"
                + f"\n--- internal log ---\n{self._tail(self.internal_log, internal_offset)}"
                + f"\n--- config ({self.config_file}) ---\n{self.config_file.read_text()}"
            ) from exc

    def stop(self, timeout: float = _STOP_TIMEOUT) -> None:
        """SIGTERM rsyslogd and wait for it to exit; SIGKILL it after `timeout` seconds. Idempotent."""
        process, self._process = self._process, None
        _live.discard(self)
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.pid_file.unlink(missing_ok=True)

    def restart_on_same_port(self, timeout: float = _START_TIMEOUT) -> None:
        """:meth:`stop` then :meth:`start`: rsyslog comes back on the same :attr:`port`.

        Messages received before the restart stay in :meth:`messages`; new ones are appended.
        """
        self.stop()
        self.start(timeout)

    async def astart(self) -> None:
        """:meth:`start` (default timeout) in a worker thread, so other trio tasks keep running meanwhile."""
        await trio.to_thread.run_sync(self.start)

    async def astop(self) -> None:
        """:meth:`stop` (default timeout) in a worker thread."""
        await trio.to_thread.run_sync(self.stop)

    async def arestart_on_same_port(self) -> None:
        """:meth:`restart_on_same_port` (default timeout) in a worker thread."""
        await trio.to_thread.run_sync(self.restart_on_same_port)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        await self.astart()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # Shielded: the process must be stopped even when the test is being cancelled.
        with trio.CancelScope(shield=True):
            await self.astop()

    # -- readiness probes -------------------------------------------------------------------------------

    def _probe_seen(self, nonce: str) -> bool:
        return any(nonce in line for line in _complete_lines(self.probe_file))

    def _probe_message(self, nonce: str, attempt: int) -> bytes:
        return f"<14>1 - - {_PROBE_APP} - - - {nonce}{attempt}".encode()

    def _check_alive(self) -> None:
        """Raise OSError if rsyslogd exited, _PortTaken if it reported that it could not bind its port."""
        assert self._process is not None
        status = self._process.poll()
        if status is not None:
            raise OSError(f"rsyslogd exited with status {status}")
        with self.stderr_file.open("rb") as file:
            file.seek(self._stderr_offset)
            if _BIND_FAILED.search(file.read()):
                raise _PortTaken(f"{HOST}:{self._port} is in use by another process")

    def _wait_for_probe(self, nonce: str, deadline: float) -> None:
        """Send probes until one with `nonce` is in the probe file; TimeoutError at `deadline`."""
        if self.transport == "udp":
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                attempt = 0
                while True:
                    self._check_alive()
                    attempt += 1
                    sock.sendto(self._probe_message(nonce, attempt), (HOST, self._port))
                    # A datagram sent before the socket is bound is lost; resend every 100 ms.
                    if self._poll(lambda: self._probe_seen(nonce), min(deadline, time.monotonic() + 0.1)):
                        return
                    if time.monotonic() >= deadline:
                        raise TimeoutError("no UDP probe datagram came through")
        stream = self._connect(deadline)
        with stream:
            message = self._probe_message(nonce, 1)
            stream.sendall(b"%d %s" % (len(message), message))
            if not self._poll(lambda: self._probe_seen(nonce), deadline):
                raise TimeoutError(f"a probe sent over {self.transport} did not come through")
            if isinstance(stream, ssl.SSLSocket):
                # Send close_notify so rsyslog does not log a "non-properly terminated" TLS error; rsyslog
                # closes without answering it, hence the suppression.
                with contextlib.suppress(OSError):
                    stream.unwrap()

    def _connect(self, deadline: float) -> socket.socket:
        """A connection (TLS-wrapped for "tls") to the port, retried until it is accepted or `deadline`."""
        while True:
            self._check_alive()
            try:
                sock = socket.create_connection((HOST, self._port), timeout=max(0.1, deadline - time.monotonic()))
            except ConnectionRefusedError:
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"nothing accepted a TCP connection on {HOST}:{self._port}") from None
                time.sleep(0.02)
                continue
            if self.transport != "tls":
                return sock
            context = ssl.create_default_context(cafile=str(self.ca_file))
            try:
                return context.wrap_socket(sock, server_hostname="localhost")
            except BaseException:
                sock.close()
                raise

    def _poll(self, condition: Callable[[], bool], deadline: float) -> bool:
        while True:
            if condition():
                return True
            if time.monotonic() >= deadline:
                return False
            self._check_alive()
            time.sleep(0.005)

    @staticmethod
    def _tail(path: Path, offset: int) -> str:
        try:
            with path.open("rb") as file:
                file.seek(offset)
                return file.read().decode("utf-8", errors="replace").strip() or "(empty)"
        except FileNotFoundError:
            return "(none)"

    # -- received messages ------------------------------------------------------------------------------

    def messages(self) -> list[str]:
        """Every message received so far (all runs), one string each, without probes or line ends.

        Read from :attr:`output_file` on each call; bytes that are not UTF-8 become U+FFFD, a BOM stays
        ``"\\ufeff"``. A line rsyslog is still writing is not included yet.
        """
        return _complete_lines(self.output_file)

    def _condition(self, what: int | MessagesPredicate) -> Callable[[list[str]], bool]:
        if isinstance(what, int):
            return lambda lines: len(lines) >= what
        return what

    def _timed_out(self, what: int | MessagesPredicate, timeout: float, lines: list[str]) -> TimeoutError:
        wanted = f"{what} messages" if isinstance(what, int) else "the expected messages"
        shown = "\n".join(lines[-20:]) or "(none)"
        return TimeoutError(
            f"rsyslog ({self.transport} on {HOST}:{self._port}) did not receive {wanted} within {timeout} s; "
            f"it has {len(lines)}, the last ones:\n{shown}"
        )

    def wait_for(self, what: int | MessagesPredicate, timeout: float = 10.0) -> list[str]:
        """Block until at least `what` messages (an int) or `what(messages)` is true; return the messages.

        Polls every 10 ms. Raises TimeoutError, listing what was received, after `timeout` seconds.
        """
        condition = self._condition(what)
        deadline = time.monotonic() + timeout
        while True:
            lines = self.messages()
            if condition(lines):
                return lines
            if time.monotonic() >= deadline:
                raise self._timed_out(what, timeout, lines)
            time.sleep(0.01)

    async def await_messages(
        self,
        count: int | MessagesPredicate,
        timeout: float = 10,  # noqa: ASYNC109 -- a polling budget whose TimeoutError lists what did arrive
    ) -> list[str]:
        """:meth:`wait_for` for trio code: polls with ``trio.sleep``, so other tasks run meanwhile.

        Also ends early, with trio's Cancelled, when an enclosing cancel scope expires.
        """
        condition = self._condition(count)
        deadline = trio.current_time() + timeout
        while True:
            lines = self.messages()
            if condition(lines):
                return lines
            if trio.current_time() >= deadline:
                raise self._timed_out(count, timeout, lines)
            await trio.sleep(0.01)

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self.running else "stopped"
        return f"<RsyslogReceiver {self.transport} {HOST}:{self._port} {state} in {self.workdir}>"
