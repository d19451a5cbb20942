"""API key format, generation and verification.

A key is `agk_` + a 16-character public id + a 43-character secret. The id is stored in the clear (it
identifies the key and is shown as its prefix); only the SHA-256 of the secret is stored, and it is
compared in constant time. Keys are random (256-bit secrets), so a fast hash is the right tool here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import secrets

PREFIX = "agk_"
_ID_LEN = 16
_SECRET_LEN = 43
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclasses.dataclass(frozen=True)
class NewKey:
    key_id: str
    raw: str
    secret_hash: str

    @property
    def prefix(self) -> str:
        """What listings show: enough to recognise the key, useless to use it."""
        return PREFIX + self.key_id


def generate() -> NewKey:
    key_id = "".join(secrets.choice(_ALPHABET) for _ in range(_ID_LEN))
    secret = secrets.token_urlsafe(32)[:_SECRET_LEN]
    return NewKey(key_id=key_id, raw=PREFIX + key_id + secret, secret_hash=hash_secret(secret))


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def split(raw: str) -> tuple[str, str] | None:
    """(key id, secret) of a well-formed key, else None."""
    if not raw.startswith(PREFIX) or len(raw) != len(PREFIX) + _ID_LEN + _SECRET_LEN:
        return None
    body = raw[len(PREFIX) :]
    return body[:_ID_LEN], body[_ID_LEN:]


def matches(secret: str, secret_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), secret_hash)
