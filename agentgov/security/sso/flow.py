"""The OpenID Connect authorization code flow: start, callback (ID token verified), exchange of the one-time code."""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import jwt
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.base_client import OAuthError
from authlib.integrations.httpx_client import AsyncOAuth2Client

from agentgov.config import Settings, SsoSettings
from agentgov.security.sso.providers import (
    ASYMMETRIC_ALGORITHMS,
    CLOCK_LEEWAY,
    GOOGLE_ISSUER,
    HTTP_TIMEOUT,
    JWKS_MIN_REFRESH,
    METADATA_TTL,
    SCOPES,
    Provider,
    SsoError,
    get_provider,
)
from agentgov.security.sso.records import (
    CallbackParams,
    PendingSignIn,
    VerifiedIdentity,
    _digest,
    _used_code_key,
    code_key,
    state_key,
)
from agentgov.storage.cache import Cache

log = logging.getLogger("agentgov.sso")

# --------------------------------------------------------------------------- the flow


class SsoFlow:
    """The authorization code flow for every provider, over the shared cache.

    Discovery documents are kept in process for `METADATA_TTL`; JWKS until a token names an unknown key
    (then fetched again, at most every `JWKS_MIN_REFRESH` seconds).
    """

    def __init__(self, settings: Settings, cache: Cache) -> None:
        self._settings = settings
        self._cache = cache
        self._metadata: dict[str, tuple[float, dict[str, Any]]] = {}
        self._jwks: dict[str, tuple[float, jwt.PyJWKSet]] = {}

    @property
    def sso(self) -> SsoSettings:
        return self._settings.sso

    @asynccontextmanager
    async def http_client(self, provider: Provider, callback_url: str) -> AsyncIterator[AsyncOAuth2Client]:
        """authlib's OAuth 2 client (httpx) for `provider`, closed on exit."""
        async with AsyncOAuth2Client(
            client_id=provider.client_id,
            client_secret=provider.client_secret,
            token_endpoint_auth_method="client_secret_basic",
            scope=SCOPES,
            redirect_uri=callback_url,
            code_challenge_method="S256",
            timeout=HTTP_TIMEOUT,
        ) as client:
            yield client

    async def _get_json(self, client: AsyncOAuth2Client, provider: Provider, url: str, what: str) -> Any:
        try:
            response = await client.request("GET", url, withhold_token=True)
        except httpx2.HTTPError as exc:
            raise SsoError(502, f"{provider.name} could not be reached for its {what}: {exc}") from None
        if response.status_code != 200:
            raise SsoError(502, f"{provider.name} answered HTTP {response.status_code} for its {what}")
        try:
            return response.json()
        except ValueError:
            raise SsoError(502, f"{provider.name} sent a {what} that is not JSON") from None

    async def metadata(self, provider: Provider, client: AsyncOAuth2Client) -> dict[str, Any]:
        """The provider's discovery document (cached). Raises `SsoError` 502 if unusable."""
        key = f"{provider.id} {provider.discovery_url}"
        cached = self._metadata.get(key)
        if cached is not None and time.monotonic() - cached[0] < METADATA_TTL:
            return cached[1]
        document = await self._get_json(client, provider, provider.discovery_url, "discovery document")
        needed = ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri")
        if not isinstance(document, dict) or not all(isinstance(document.get(k), str) for k in needed):
            raise SsoError(502, f"{provider.name}'s discovery document lacks {', '.join(needed)}")
        if not provider.discovery_override and not _same_issuer(provider, document["issuer"]):
            raise SsoError(
                502,
                f"{provider.name}'s discovery document names issuer {document['issuer']!r}, "
                f"expected {provider.issuer!r}",
            )
        self._metadata[key] = (time.monotonic(), document)
        return document

    async def begin(
        self,
        provider_id: str,
        *,
        callback_url: str,
        redirect: str,
        tenant_hint: str | None,
        binding: str,
    ) -> str:
        """Remember a new sign-in and return the provider's authorization URL.

        Raises `SsoError` (404 unknown provider, 400 disabled, 502 provider unreachable).
        """
        provider = get_provider(self.sso, provider_id)
        state, nonce, verifier = secrets.token_urlsafe(32), secrets.token_urlsafe(32), secrets.token_urlsafe(64)
        async with self.http_client(provider, callback_url) as client:
            metadata = await self.metadata(provider, client)
            url, _ = client.create_authorization_url(
                metadata["authorization_endpoint"], state=state, code_verifier=verifier, nonce=nonce
            )
        pending = PendingSignIn(
            provider=provider.id,
            nonce=nonce,
            code_verifier=verifier,
            redirect=redirect,
            callback_url=callback_url,
            tenant_hint=tenant_hint,
            binding_hash=_digest(binding),
        )
        await self._cache.set(state_key(state), pending.to_json(), ttl=self.sso.state_ttl)
        return str(url)

    async def _claim_state(self, state: str | None) -> PendingSignIn:
        if not state:
            raise SsoError(400, "Missing state: the callback must come from the identity provider")
        key = state_key(state)
        raw = await self._cache.get(key)
        if raw is None or not await self._cache.delete(key):
            raise SsoError(400, "Unknown, expired or already used sign-in state; start the sign-in again")
        return PendingSignIn.from_json(raw)

    async def complete(self, params: CallbackParams, *, binding: str | None) -> tuple[PendingSignIn, VerifiedIdentity]:
        """Finish the sign-in the provider redirected back with; return it and the verified identity.

        Raises `SsoError`: 400 (state missing, unknown, used, from another browser; provider error; code
        refused), 401 (ID token does not verify), 403 (email missing or unverified), 502 (provider broken).
        """
        pending = await self._claim_state(params.state)
        if binding is None or not hmac.compare_digest(_digest(binding), pending.binding_hash):
            raise SsoError(400, "This sign-in was started in another browser (or its cookie is gone); start again")
        provider = get_provider(self.sso, pending.provider)
        async with self.http_client(provider, pending.callback_url) as client:
            metadata = await self.metadata(provider, client)
            if params.iss is not None and params.iss != metadata["issuer"]:
                raise SsoError(400, "The authorization response comes from another issuer than the one asked")
            if params.iss is None and metadata.get("authorization_response_iss_parameter_supported") is True:
                raise SsoError(400, "The authorization response lacks the iss parameter its issuer always sends")
            if params.error:
                description = f" ({params.error_description[:200]})" if params.error_description else ""
                raise SsoError(400, f"{provider.name} refused the sign-in: {params.error[:100]}{description}")
            if not params.code:
                raise SsoError(400, "Missing code in the callback from the identity provider")
            try:
                tokens = await client.fetch_token(
                    metadata["token_endpoint"],
                    grant_type="authorization_code",
                    code=params.code,
                    code_verifier=pending.code_verifier,
                )
            except OAuthError as exc:
                raise SsoError(400, f"{provider.name} refused the authorization code: {exc.error}") from None
            except (httpx2.HTTPError, AuthlibBaseError, ValueError) as exc:
                raise SsoError(502, f"Token request to {provider.name} failed: {exc}") from None
            id_token = tokens.get("id_token")
            if not isinstance(id_token, str):
                raise SsoError(502, f"{provider.name} returned no ID token")
            claims = await self.verify_id_token(provider, metadata, client, id_token, pending.nonce)
        return pending, _identity(provider, claims)

    async def _signing_key(
        self, provider: Provider, client: AsyncOAuth2Client, jwks_uri: str, kid: str | None
    ) -> jwt.PyJWK:
        for attempt in range(2):
            cached = self._jwks.get(jwks_uri)
            stale = cached is None or (attempt == 1 and time.monotonic() - cached[0] >= JWKS_MIN_REFRESH)
            if stale:
                document = await self._get_json(client, provider, jwks_uri, "signing keys (JWKS)")
                try:
                    keys = jwt.PyJWKSet.from_dict(document)
                except (jwt.PyJWTError, TypeError, AttributeError):
                    raise SsoError(502, f"{provider.name} published no usable signing key") from None
                cached = (time.monotonic(), keys)
                self._jwks[jwks_uri] = cached
            assert cached is not None
            candidates = [k for k in cached[1].keys if kid is None or k.key_id == kid]
            if len(candidates) == 1 or (kid is not None and candidates):
                return candidates[0]
            if kid is None:
                break
        raise SsoError(401, "The ID token is signed with a key the identity provider does not publish")

    async def verify_id_token(
        self,
        provider: Provider,
        metadata: dict[str, Any],
        client: AsyncOAuth2Client,
        id_token: str,
        nonce: str,
    ) -> dict[str, Any]:
        """The claims of `id_token` once verified against the provider's JWKS and this sign-in's `nonce`.

        Raises `SsoError` 401 (malformed, unaccepted algorithm, unknown key, bad signature, expired, wrong
        issuer, audience, azp or nonce) or 502 (the JWKS cannot be fetched or has no usable key).
        """
        try:
            header = jwt.get_unverified_header(id_token)
        except jwt.PyJWTError:
            raise SsoError(401, "The ID token is malformed") from None
        announced = metadata.get("id_token_signing_alg_values_supported") or ["RS256"]
        algorithm = header.get("alg")
        if algorithm not in ASYMMETRIC_ALGORITHMS or algorithm not in announced:
            raise SsoError(401, f"The ID token's signing algorithm {algorithm!r} is not accepted")
        key = await self._signing_key(provider, client, metadata["jwks_uri"], header.get("kid"))
        try:
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key=key,
                algorithms=[algorithm],
                audience=provider.client_id,
                leeway=CLOCK_LEEWAY,
                options={"require": ["iss", "sub", "aud", "exp", "iat"]},
            )
        except jwt.ExpiredSignatureError:
            raise SsoError(401, "The ID token has expired") from None
        except jwt.InvalidAudienceError:
            raise SsoError(401, "The ID token was issued to another client") from None
        except jwt.InvalidSignatureError:
            raise SsoError(401, "The ID token's signature does not verify") from None
        except jwt.PyJWTError as exc:
            raise SsoError(401, f"The ID token is invalid: {exc}") from None
        if claims["iss"] not in _accepted_issuers(metadata["issuer"], claims):
            raise SsoError(401, "The ID token comes from another issuer")
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != provider.client_id:
            raise SsoError(401, "The ID token was issued to another client (azp)")
        if not isinstance(claims.get("nonce"), str) or not hmac.compare_digest(claims["nonce"], nonce):
            raise SsoError(401, "The ID token's nonce does not match this sign-in; start the sign-in again")
        return claims

    async def issue_code(self, user_id: str) -> str:
        """A fresh one-time `sso_code` for `user_id`, valid for `SSO_CODE_TTL` seconds."""
        code = secrets.token_urlsafe(32)
        await self._cache.set(code_key(code), json.dumps({"user_id": user_id}), ttl=self.sso.code_ttl)
        return code

    async def redeem_code(self, code: str) -> str:
        """The user id behind `code`, which is spent. Raises `SsoError` 400 (unknown, expired, already used)."""
        key = code_key(code)
        raw = await self._cache.get(key)
        if raw is not None and await self._cache.delete(key):
            await self._cache.set(_used_code_key(code), "1", ttl=max(self.sso.code_ttl, 60.0))
            return str(json.loads(raw)["user_id"])
        if raw is not None or await self._cache.get(_used_code_key(code)) is not None:
            raise SsoError(400, "This sso_code has already been used; sign in again")
        raise SsoError(
            400, f"This sso_code is invalid or has expired (codes are valid {self.sso.code_ttl:g} s); sign in again"
        )


def _same_issuer(provider: Provider, announced: str) -> bool:
    if announced.rstrip("/") == provider.issuer.rstrip("/"):
        return True
    # Entra ID's multi-tenant endpoints (common, organizations, consumers) announce a template.
    return provider.id == "microsoft" and "{tenantid}" in announced


def _accepted_issuers(announced: str, claims: dict[str, Any]) -> set[str]:
    if "{tenantid}" in announced:
        tenant = claims.get("tid")
        return {announced.replace("{tenantid}", tenant)} if isinstance(tenant, str) and tenant else set()
    accepted = {announced}
    if announced == GOOGLE_ISSUER:
        accepted.add("accounts.google.com")  # Google documents both forms
    return accepted


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _identity(provider: Provider, claims: dict[str, Any]) -> VerifiedIdentity:
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email:
        raise SsoError(403, f"{provider.name} did not share an email address; allow the 'email' scope")
    verified = _truthy(claims.get("email_verified"))
    if provider.id == "microsoft" and not verified:
        verified = _truthy(claims.get("xms_edov"))  # Entra ID: the email's domain is verified by its owner
    if not verified:
        raise SsoError(403, f"{provider.name} has not verified the email address {email}")
    name = claims.get("name")
    return VerifiedIdentity(
        provider=provider.id,
        subject=str(claims["sub"]),
        email=email.strip(),
        name=name.strip()[:200] if isinstance(name, str) else "",
    )
