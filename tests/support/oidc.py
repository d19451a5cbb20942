"""A real OpenID Connect provider on loopback, for single sign-on tests.

The provider is the Node.js ``oidc-provider`` package (pinned in ``tests/oidc_provider``), run as a
subprocess by :func:`run_oidc_provider`. Its development login and consent screens are plain HTML
forms, which :func:`drive_login` fills in over HTTP, so a test can run the whole authorization code
flow (state, nonce, PKCE) without a browser.

Typical use from a pytest-trio test module::

    from support.oidc import drive_login, oidc_client, require_oidc_provider, run_oidc_provider

    @pytest.fixture(scope="session")
    def oidc_ready() -> None:
        require_oidc_provider()  # skips when Node.js is missing; runs `npm ci` once if needed

    @pytest.fixture
    async def idp(oidc_ready):
        async with run_oidc_provider([oidc_client("rp", REDIRECT_URI)]) as provider:
            yield provider

Accounts: any login name signs in and becomes the ``sub``. ``email`` is the login name when it
contains ``@``, else ``<login>@example.test``; ``email_verified`` is true except for login names
starting with ``unverified``. See ``tests/oidc_provider/server.js`` for the full configuration.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
import trio

__all__ = [
    "PROVIDER_DIR",
    "LoginFlowError",
    "NodeNotAvailable",
    "OIDCProvider",
    "OIDCProviderStartError",
    "drive_login",
    "ensure_node_modules",
    "oidc_client",
    "require_oidc_provider",
    "run_oidc_provider",
]

PROVIDER_DIR = Path(__file__).resolve().parent.parent / "oidc_provider"
SERVER_JS = PROVIDER_DIR / "server.js"

#: Oldest Node.js major that runs the pinned oidc-provider 9 (it warns below 22, but works).
MIN_NODE_MAJOR = 20
NPM_CI_TIMEOUT = 300.0
_READY_PREFIX = b"ready "


class NodeNotAvailable(RuntimeError):
    """Node.js (or npm, when ``node_modules`` must be installed) is not usable here.

    ``str(exc)`` is a reason suitable for ``pytest.skip``.
    """


class OIDCProviderStartError(RuntimeError):
    """The provider process exited, or did not announce readiness in time."""


class LoginFlowError(RuntimeError):
    """:func:`drive_login` met a response it does not know how to continue from."""


# --------------------------------------------------------------------------- installation


@functools.cache
def _node_executable() -> str:
    """Path of a usable ``node`` (checked once per process)."""
    node = shutil.which("node")
    if node is None:
        raise NodeNotAvailable("Node.js is not installed (no `node` on PATH); the OIDC test provider needs it")
    try:
        version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise NodeNotAvailable(f"`node --version` failed: {exc}") from exc
    match = re.fullmatch(r"v(\d+)\..*", version)
    if match is None or int(match.group(1)) < MIN_NODE_MAJOR:
        raise NodeNotAvailable(f"Node.js {version} is too old for oidc-provider 9 (need >= {MIN_NODE_MAJOR})")
    return node


def _installed_matches_pin() -> bool:
    """Whether node_modules holds exactly the oidc-provider version package.json pins."""
    pinned = json.loads((PROVIDER_DIR / "package.json").read_text())["dependencies"]["oidc-provider"]
    installed = PROVIDER_DIR / "node_modules" / "oidc-provider" / "package.json"
    try:
        return json.loads(installed.read_text())["version"] == pinned
    except (OSError, ValueError, KeyError):
        return False


def ensure_node_modules() -> None:
    """Install the provider's npm dependencies (``npm ci``) unless they are already in place.

    Blocking; call it from a sync (e.g. session-scoped) fixture. Concurrent callers, such as
    several pytest processes, are serialised with a lock on ``package-lock.json``.

    Raises :class:`NodeNotAvailable` when ``node`` (or ``npm``, if an install is needed) is missing,
    and :class:`RuntimeError` when ``npm ci`` itself fails, which is a real error, not a skip.
    """
    _node_executable()
    if _installed_matches_pin():
        return
    with (PROVIDER_DIR / "package-lock.json").open("rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed_matches_pin():  # another process installed it while we waited
            return
        npm = shutil.which("npm")
        if npm is None:
            raise NodeNotAvailable("npm is not installed; it is needed once to install tests/oidc_provider")
        result = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=PROVIDER_DIR,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=NPM_CI_TIMEOUT,
            check=False,
        )
        if result.returncode != 0 or not _installed_matches_pin():
            raise RuntimeError(
                f"`npm ci` in {PROVIDER_DIR} failed (exit {result.returncode}):\n{result.stdout}{result.stderr}"
            )


def require_oidc_provider() -> None:
    """:func:`ensure_node_modules`, but ``pytest.skip`` (with the reason) when Node.js is missing."""
    import pytest

    try:
        ensure_node_modules()
    except NodeNotAvailable as exc:
        pytest.skip(str(exc))


# --------------------------------------------------------------------------- running


def oidc_client(
    client_id: str,
    redirect_uris: str | Sequence[str],
    *,
    client_secret: str | None = None,
    token_endpoint_auth_method: str = "client_secret_basic",
    **metadata: Any,
) -> dict[str, Any]:
    """Client metadata for :func:`run_oidc_provider` (a confidential web client, code flow).

    ``client_secret`` defaults to a random one; read it back from the returned dict. Extra keyword
    arguments are passed through as oidc-provider client metadata.
    """
    if isinstance(redirect_uris, str):
        redirect_uris = [redirect_uris]
    return {
        "client_id": client_id,
        "client_secret": client_secret if client_secret is not None else secrets.token_urlsafe(32),
        "redirect_uris": list(redirect_uris),
        "token_endpoint_auth_method": token_endpoint_auth_method,
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        **metadata,
    }


@dataclass(frozen=True)
class OIDCProvider:
    """A running provider, as yielded by :func:`run_oidc_provider`."""

    issuer: str
    """``http://127.0.0.1:<port>``, without a trailing slash (exactly the ``iss`` it issues)."""
    clients: tuple[Mapping[str, Any], ...]
    process: trio.Process = field(repr=False)

    @property
    def discovery_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def client(self, client_id: str) -> Mapping[str, Any]:
        """The metadata the provider was started with for ``client_id``."""
        for client in self.clients:
            if client["client_id"] == client_id:
                return client
        raise KeyError(client_id)


async def _read_ready_line(stdout: trio.abc.ReceiveStream) -> str | None:
    """The issuer from the ``ready <issuer>`` line, or None if stdout closed first."""
    buffer = b""
    while b"\n" not in buffer:
        chunk = await stdout.receive_some()
        if not chunk:
            return None
        buffer += chunk
    line = buffer.split(b"\n", 1)[0].strip()
    if not line.startswith(_READY_PREFIX):
        raise OIDCProviderStartError(f"unexpected first line from the OIDC provider: {line!r}")
    return line[len(_READY_PREFIX) :].decode()


async def _stop(process: trio.Process, grace: float) -> None:
    """Terminate ``process`` (SIGTERM, then SIGKILL after ``grace`` seconds) and reap it."""
    with trio.CancelScope(shield=True):
        if process.returncode is None:
            process.terminate()
            with trio.move_on_after(grace):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
        if process.stdout is not None:
            await process.stdout.aclose()


def _read_log(log: Any) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")


@contextlib.asynccontextmanager
async def run_oidc_provider(
    clients: Sequence[Mapping[str, Any]],
    *,
    port: int = 0,
    startup_timeout: float = 30.0,
    verbose: bool = False,
) -> AsyncIterator[OIDCProvider]:
    """Run the provider on ``127.0.0.1`` for the duration of the ``async with`` block.

    ``clients`` is a list of client metadata (see :func:`oidc_client`). ``port=0`` lets the OS pick a
    free port (no race: the provider binds first and then reports its issuer). Waits at most
    ``startup_timeout`` seconds for the ready line, raising :class:`OIDCProviderStartError` with the
    provider's stderr if it does not come. On exit, including cancellation and errors, the process
    is terminated and reaped. Anything the provider wrote to stderr is copied to ``sys.stderr``
    (captured by pytest) when the block ends; ``verbose=True`` makes it log every protocol error.

    Call :func:`ensure_node_modules` (or :func:`require_oidc_provider`) first.
    """
    node = _node_executable()
    env = {**os.environ, "OIDC_PROVIDER_CLIENTS": json.dumps(list(clients))}
    env["OIDC_PROVIDER_VERBOSE"] = "1" if verbose else "0"
    with tempfile.TemporaryFile() as log:
        process = await trio.lowlevel.open_process(
            [node, str(SERVER_JS), "--port", str(port)],
            cwd=PROVIDER_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        started = False
        try:
            assert process.stdout is not None
            issuer = None
            with trio.move_on_after(startup_timeout) as waiting:
                issuer = await _read_ready_line(process.stdout)
            if issuer is None:
                await _stop(process, grace=1.0)
                if waiting.cancelled_caught:
                    problem = f"did not become ready within {startup_timeout}s"
                else:
                    problem = f"exited with status {process.returncode} before becoming ready"
                raise OIDCProviderStartError(f"OIDC test provider {problem}; its stderr:\n{_read_log(log)}")
            started = True
            yield OIDCProvider(issuer=issuer, clients=tuple(clients), process=process)
        finally:
            await _stop(process, grace=5.0)
            output = _read_log(log) if started else ""
            if output:
                sys.stderr.write(f"--- OIDC test provider stderr ---\n{output}")


# --------------------------------------------------------------------------- login


class _FormParser(HTMLParser):
    """Collects every <form>: its action and the name/value of its <input>s (all forms here POST)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.forms.append({"action": attributes.get("action", ""), "inputs": {}})
        elif tag == "input" and self.forms and "name" in attributes:
            self.forms[-1]["inputs"][attributes["name"]] = attributes.get("value", "")


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


async def drive_login(
    client: httpx.AsyncClient,
    authorize_url: str,
    login: str,
    *,
    password: str = "test",
    max_steps: int = 12,
) -> str:
    """Act as the user's browser from ``authorize_url`` until the provider redirects away.

    Follows the provider's redirects by hand (``follow_redirects=False``), submits its development
    login form (``login`` as the login name; any password is accepted) and consent form, and keeps
    the provider's cookies in ``client``'s cookie jar. If ``client`` already holds a provider session
    (from an earlier call), the login and/or consent screens are simply skipped.

    Returns the first redirect target outside the provider's origin, i.e. the relying party's
    ``redirect_uri`` with ``code``, ``state`` and ``iss`` (or ``error``) in its query. That URL is
    not fetched. Raises :class:`LoginFlowError` on anything else (the provider's error page, an
    unknown screen, too many steps).
    """
    provider_origin = _origin(authorize_url)
    url = authorize_url
    response = await client.get(url, follow_redirects=False)
    for _ in range(max_steps):
        if response.is_redirect:
            location = urljoin(str(response.url), response.headers["location"])
            if _origin(location) != provider_origin:
                return location
            url = location
            response = await client.get(url, follow_redirects=False)
            continue

        if response.status_code != 200:
            raise LoginFlowError(f"HTTP {response.status_code} from {url}:\n{response.text[:2000]}")
        parser = _FormParser()
        parser.feed(response.text)
        forms = [form for form in parser.forms if form["inputs"].get("prompt") in {"login", "consent"}]
        if len(forms) != 1:
            raise LoginFlowError(f"no login or consent form at {url}:\n{response.text[:2000]}")
        form = forms[0]
        data = dict(form["inputs"])
        if data["prompt"] == "login":
            data.update(login=login, password=password)
        url = urljoin(str(response.url), form["action"])
        response = await client.post(url, data=data, follow_redirects=False)
    raise LoginFlowError(f"no redirect to the relying party after {max_steps} steps (last: {url})")
