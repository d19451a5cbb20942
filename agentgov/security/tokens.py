"""JWT access tokens: issue, verify, revoke.

Tokens are HS256-signed with `JWT_SECRET`; the header's `kid` names the key (a hash prefix of the secret),
so the key can be rotated: put the old secret in `JWT_PREVIOUS_SECRETS` and tokens it signed keep
verifying until they expire. Claims: `sub` (user id), `tid` (tenant id, absent for Super Admin), `role`,
`sid` (the session API key id), `jti`, `iat` (and `iat_ms`, its millisecond form), `exp`, `iss`.

Revocation is kept in the cache (shared through Redis between processes): logging out marks the token's
`jti` revoked until it would have expired; blocking a user marks every token issued to them before now.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import time
import uuid
from typing import Any

import jwt

from agentgov.config import Settings
from agentgov.storage.cache import Cache

ISSUER = "agentgov"
ALGORITHM = "HS256"


class InvalidToken(Exception):
    """The token is malformed, badly signed, expired or revoked; the message says which (safe to show)."""


def key_id(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:12]


def signing_key(secret: str) -> bytes:
    """The 256-bit HMAC key derived from a configured secret (any length in, 32 bytes out)."""
    return hmac.new(secret.encode(), b"agentgov access token v1", hashlib.sha256).digest()


@dataclasses.dataclass(frozen=True)
class AccessToken:
    token: str
    jti: str
    expires_in: int
    expires_at: float


class TokenService:
    def __init__(self, settings: Settings, cache: Cache) -> None:
        self._kid = key_id(settings.jwt_secret)
        self._key = signing_key(settings.jwt_secret)
        self._keys = {key_id(s): signing_key(s) for s in (settings.jwt_secret, *settings.jwt_previous_secrets)}
        self._ttl = int(settings.access_token_ttl)
        self._cache = cache

    def issue(self, *, user_id: str, tenant_id: str | None, role: str, session_key_id: str | None) -> AccessToken:
        moment = time.time()
        now = int(moment)
        jti = uuid.uuid4().hex
        claims: dict[str, Any] = {
            "iss": ISSUER,
            "sub": user_id,
            "role": role,
            "jti": jti,
            "iat": now,
            "iat_ms": int(moment * 1000),
            "exp": now + self._ttl,
        }
        if tenant_id is not None:
            claims["tid"] = tenant_id
        if session_key_id is not None:
            claims["sid"] = session_key_id
        token = jwt.encode(claims, self._key, algorithm=ALGORITHM, headers={"kid": self._kid})
        return AccessToken(token=token, jti=jti, expires_in=self._ttl, expires_at=now + self._ttl)

    async def verify(self, token: str) -> dict[str, Any]:
        """The token's claims. Raises `InvalidToken` (or `CacheError` if revocations cannot be read)."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("malformed token") from None
        key = self._keys.get(str(header.get("kid", "")))
        if key is None:
            raise InvalidToken("token signed with an unknown key")
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[ALGORITHM],
                issuer=ISSUER,
                options={"require": ["exp", "iat", "sub", "jti", "role"]},
            )
        except jwt.ExpiredSignatureError:
            raise InvalidToken("token has expired") from None
        except jwt.PyJWTError:
            raise InvalidToken("invalid token") from None
        if await self._cache.get(f"revoked:jti:{claims['jti']}") is not None:
            raise InvalidToken("token has been revoked")
        cutoff = await self._cache.get(f"revoked:user:{claims['sub']}")
        issued_ms = int(claims.get("iat_ms", claims["iat"] * 1000))
        if cutoff is not None and issued_ms <= int(cutoff):
            raise InvalidToken("token has been revoked")
        return claims

    async def revoke(self, claims: dict[str, Any]) -> None:
        """Revoke one token until it would have expired."""
        remaining = max(1.0, float(claims["exp"]) - time.time())
        await self._cache.set(f"revoked:jti:{claims['jti']}", "1", ttl=remaining + 5)

    async def revoke_user(self, user_id: str) -> None:
        """Revoke every token issued to `user_id` up to now."""
        await self._cache.set(f"revoked:user:{user_id}", str(int(time.time() * 1000)), ttl=self._ttl + 60)
