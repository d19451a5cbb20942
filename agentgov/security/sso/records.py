"""Single sign-on redirects and the cache records of a sign-in in progress (state, one-time codes, browser
binding)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import secrets
from urllib.parse import urlencode, urlsplit, urlunsplit

from agentgov.config import Settings
from agentgov.security.sso.providers import (
    _BINDING_FORMAT,
    _UNSAFE_REDIRECT_CHARS,
    MAX_REDIRECT_LENGTH,
    SsoError,
)

log = logging.getLogger("agentgov.sso")

# --------------------------------------------------------------------------- redirects


def safe_redirect_path(value: str) -> str:
    """`value` if it is a same-site relative path, else `ValueError`.

    Accepted: starts with exactly one `/`, no backslash, whitespace or control character, no scheme or
    host, at most `MAX_REDIRECT_LENGTH` characters. Query and fragment are kept.
    """
    if len(value) > MAX_REDIRECT_LENGTH:
        raise ValueError(f"must be at most {MAX_REDIRECT_LENGTH} characters")
    if not value.startswith("/") or value.startswith("//"):
        raise ValueError("must be a relative path starting with a single '/' (no scheme or host)")
    if _UNSAFE_REDIRECT_CHARS.search(value):
        raise ValueError("must not contain backslashes, spaces or control characters")
    parts = urlsplit(value)
    if parts.scheme or parts.netloc:
        raise ValueError("must be a relative path (no scheme or host)")
    return value


def frontend_location(settings: Settings, redirect: str, code: str) -> str:
    """Where the callback sends the browser: the frontend's `redirect` path with `sso_code` added.

    The base is `SSO_FRONTEND_URL`, else `PUBLIC_BASE_URL`, else none (a same-origin relative location).
    """
    parts = urlsplit(redirect)
    query = "&".join(q for q in (parts.query, urlencode({"sso_code": code})) if q)
    path = urlunsplit(("", "", parts.path, query, parts.fragment))
    return (settings.sso.frontend_url or settings.public_base_url) + path


# --------------------------------------------------------------------------- cache records


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def state_key(state: str) -> str:
    """Cache key of a pending sign-in (the state itself is never stored)."""
    return f"sso:state:{_digest(state)}"


def code_key(code: str) -> str:
    """Cache key of an unredeemed `sso_code`."""
    return f"sso:code:{_digest(code)}"


def _used_code_key(code: str) -> str:
    return f"sso:code-used:{_digest(code)}"


def new_binding() -> str:
    """A fresh browser-binding secret (kept in the `BINDING_COOKIE` cookie)."""
    return secrets.token_urlsafe(32)


def valid_binding(value: str | None) -> bool:
    return value is not None and bool(_BINDING_FORMAT.match(value))


@dataclasses.dataclass(frozen=True)
class PendingSignIn:
    """What `begin` remembers until the callback."""

    provider: str
    nonce: str
    code_verifier: str
    redirect: str
    callback_url: str
    tenant_hint: str | None
    binding_hash: str

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, raw: str) -> PendingSignIn:
        """Raises `SsoError` 400 when the record is not one `to_json` wrote."""
        try:
            data = json.loads(raw)
            return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})
        except (ValueError, KeyError, TypeError):
            raise SsoError(400, "Invalid sign-in state; start the sign-in again") from None


@dataclasses.dataclass(frozen=True)
class VerifiedIdentity:
    """Who the provider vouched for: its subject, a verified email, and a display name."""

    provider: str
    subject: str
    email: str
    name: str


@dataclasses.dataclass(frozen=True)
class CallbackParams:
    code: str | None = None
    state: str | None = None
    iss: str | None = None
    error: str | None = None
    error_description: str | None = None
