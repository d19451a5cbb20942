"""Single sign-on with OpenID Connect: the provider registry, the authorization code flow, account linking.

Providers. Four are known (`PROVIDER_IDS`): `google`, `microsoft` (Entra ID), `okta` and `oidc` (any
OpenID Connect issuer, e.g. Keycloak). `providers(settings.sso)` derives each one's discovery URL from its
settings (`SsoSettings`, read from `SSO_*`); a provider is enabled when its client id, client secret and
issuer (or a discovery-URL override) are set. With an override, the issuer is the one the discovery
document names; without one, the document must name the configured issuer.

Flow (`SsoFlow`). `begin` stores a pending sign-in (provider, nonce, PKCE verifier, post-login redirect,
callback URL, tenant hint, and a hash of a browser-binding secret) in the cache under a random `state` for
`SSO_STATE_TTL` seconds and returns the provider's authorization URL (code flow, PKCE S256, nonce).
`complete` claims that state exactly once (`Cache.delete` is the atomic claim, so it works across
processes sharing Redis), checks the browser binding and the RFC 9207 `iss` parameter, exchanges the code
(with the verifier) at the token endpoint through authlib's httpx client, and verifies the ID token with
the provider's JWKS (signature with an asymmetric algorithm the provider announces, `iss`, `aud`, `azp`,
`exp`, `iat`, `nonce`) and that the email is verified. `issue_code` / `redeem_code` hand the signed-in
user to the frontend through a one-time `sso_code` kept in the cache for `SSO_CODE_TTL` seconds.

Linking (`link_account`): see docs/sso.md. A verified email finds the tenant user with that email
(case-insensitive); a tenant hint narrows the search to one tenant; an email in several tenants without a
hint is refused (409); a blocked user is refused (403); an unknown email is provisioned just in time only
in the hinted tenant and only if that tenant's settings allow it (`sso_jit_role`, `sso_jit_domains`).
Platform (Super Admin) accounts never sign in through SSO.

Errors are `SsoError(status, detail)`; the detail is safe to show. Network failures talking to the
provider are 502. Cancellation: a cancelled `complete` may leave its state already claimed (the sign-in
must be started again) and never leaves a half-issued code; HTTP clients are closed on the way out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import logging
import re
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import httpx2
import jwt
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.base_client import OAuthError
from authlib.integrations.httpx_client import AsyncOAuth2Client

from agentgov.config import Settings, SsoSettings
from agentgov.logs import fields
from agentgov.security.roles import Role
from agentgov.storage.cache import Cache
from agentgov.storage.identity import Conflict, IdentityRepo, NewUser
from agentgov.storage.records import Tenant, User

log = logging.getLogger("agentgov.sso")

PROVIDER_IDS = ("google", "microsoft", "okta", "oidc")
GOOGLE_ISSUER = "https://accounts.google.com"
MICROSOFT_AUTHORITY = "https://login.microsoftonline.com"
WELL_KNOWN = "/.well-known/openid-configuration"
SCOPES = "openid email profile"
HTTP_TIMEOUT = 10.0
METADATA_TTL = 3600.0
JWKS_MIN_REFRESH = 30.0
CLOCK_LEEWAY = 60
DEFAULT_REDIRECT = "/dashboard"
MAX_REDIRECT_LENGTH = 2048
BINDING_COOKIE = "agentgov_sso"
ASYMMETRIC_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
JIT_ROLES = (Role.DEVELOPER, Role.SECURITY_ANALYST, Role.ADMIN)
_BINDING_FORMAT = re.compile(r"^[A-Za-z0-9_-]{32,128}$")
_UNSAFE_REDIRECT_CHARS = re.compile(r"[\x00-\x20\x7f\\]")


class SsoError(Exception):
    """A refused sign-in step: `status` (4xx, or 502 when the provider misbehaves) and a showable `detail`."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


# --------------------------------------------------------------------------- provider registry


@dataclasses.dataclass(frozen=True)
class Provider:
    """One identity provider as configured. `missing` names the settings it still needs (empty: enabled)."""

    id: str
    name: str
    client_id: str
    client_secret: str = dataclasses.field(repr=False)
    issuer: str
    """The configured issuer ("" when only a discovery URL is known)."""
    discovery_url: str
    """Where the discovery document is fetched ("" while unknown)."""
    discovery_override: bool
    missing: tuple[str, ...]

    @property
    def enabled(self) -> bool:
        return not self.missing


def _provider(
    provider_id: str,
    name: str,
    sso: SsoSettings,
    issuer: str,
    override: str,
    issuer_setting: str,
) -> Provider:
    prefix = f"SSO_{provider_id.upper()}_"
    client_id = getattr(sso, f"{provider_id}_client_id")
    client_secret = getattr(sso, f"{provider_id}_client_secret")
    missing = [prefix + "CLIENT_ID"] if not client_id else []
    if not client_secret:
        missing.append(prefix + "CLIENT_SECRET")
    if not issuer and not override:
        missing.append(f"{issuer_setting} or {prefix}DISCOVERY_URL")
    return Provider(
        id=provider_id,
        name=name,
        client_id=client_id,
        client_secret=client_secret,
        issuer=issuer,
        discovery_url=override or (issuer + WELL_KNOWN if issuer else ""),
        discovery_override=bool(override),
        missing=tuple(missing),
    )


def microsoft_issuer(tenant: str) -> str:
    """Entra ID's v2.0 issuer for a directory (tenant id, domain, or common/organizations/consumers)."""
    return f"{MICROSOFT_AUTHORITY}/{quote(tenant.strip(), safe='')}/v2.0" if tenant.strip() else ""


def okta_issuer(value: str) -> str:
    """An Okta issuer from `SSO_OKTA_ISSUER`: a URL as is, or a bare domain as `https://<domain>`."""
    value = value.strip().rstrip("/")
    if not value or value.startswith(("https://", "http://")):
        return value
    return f"https://{value}"


def providers(sso: SsoSettings) -> tuple[Provider, ...]:
    """The four providers, in `PROVIDER_IDS` order, enabled or not."""
    return (
        _provider("google", "Google", sso, GOOGLE_ISSUER, sso.google_discovery_url, "(fixed issuer)"),
        _provider(
            "microsoft",
            "Microsoft Entra ID",
            sso,
            microsoft_issuer(sso.microsoft_tenant),
            sso.microsoft_discovery_url,
            "SSO_MICROSOFT_TENANT",
        ),
        _provider("okta", "Okta", sso, okta_issuer(sso.okta_issuer), sso.okta_discovery_url, "SSO_OKTA_ISSUER"),
        _provider(
            "oidc",
            sso.oidc_name or "OpenID Connect",
            sso,
            sso.oidc_issuer,
            sso.oidc_discovery_url,
            "SSO_OIDC_ISSUER",
        ),
    )


def get_provider(sso: SsoSettings, provider_id: str) -> Provider:
    """The provider `provider_id`, which must be enabled. Raises `SsoError` 404 (unknown) or 400 (disabled)."""
    for candidate in providers(sso):
        if candidate.id == provider_id:
            if not candidate.enabled:
                raise SsoError(
                    400,
                    f"Single sign-on with {candidate.name} is not enabled on this server "
                    f"(missing: {', '.join(candidate.missing)})",
                )
            return candidate
    raise SsoError(404, f"Unknown identity provider {provider_id!r}; expected one of: {', '.join(PROVIDER_IDS)}")


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


# --------------------------------------------------------------------------- linking


async def find_tenant(identity_repo: IdentityRepo, hint: str) -> Tenant | None:
    """The tenant named by `hint`: its id or, case-insensitively, its name."""
    return await identity_repo.get_tenant(hint.strip()) or await identity_repo.get_tenant_by_name(hint)


def _jit_role(tenant: Tenant, email: str) -> Role:
    """The role a first sign-in gets in `tenant`. Raises `SsoError` 403 when the tenant does not allow it."""
    settings = tenant.settings or {}
    role_name = settings.get("sso_jit_role")
    if not role_name:
        raise SsoError(403, f"No account for {email} in this tenant; ask an administrator to create it")
    try:
        role = Role.parse(str(role_name))
    except ValueError:
        role = Role.SUPER_ADMIN
    if role not in JIT_ROLES:
        raise SsoError(403, "This tenant's sso_jit_role is not a tenant role; ask an administrator to fix it")
    domains = settings.get("sso_jit_domains") or []
    domain = email.rsplit("@", 1)[1].lower()
    if not isinstance(domains, list) or not ("*" in domains or domain in {str(d).lower() for d in domains}):
        raise SsoError(403, f"No account for {email} in this tenant, and its domain may not sign up by SSO")
    return role


async def link_account(identity_repo: IdentityRepo, identity: VerifiedIdentity, tenant_hint: str | None) -> User:
    """The tenant user the verified identity signs in as, provisioning it just in time if allowed.

    `tenant_hint` (a tenant id or name) limits the search to that tenant; a hint that names no tenant is
    answered like an unknown account, so the public routes never reveal which tenants exist.
    Raises `SsoError` 403 (no account and no provisioning, or blocked), 409 (several tenants, no hint).
    """
    tenant: Tenant | None = None
    if tenant_hint is not None:
        tenant = await find_tenant(identity_repo, tenant_hint)
        if tenant is None:
            raise SsoError(403, f"No account for {identity.email} in this tenant; ask an administrator to create it")
    users = [u for u in await identity_repo.users_by_email(identity.email) if u.tenant_id]
    if tenant is not None:
        users = [u for u in users if u.tenant_id == tenant.id]
    if len(users) > 1:
        raise SsoError(
            409,
            f"{identity.email} has accounts in several tenants; start the sign-in again with tenant=<id or name>",
        )
    if users:
        user: User = users[0]
    elif tenant is None:
        raise SsoError(403, f"No account for {identity.email}; ask your administrator to create one")
    else:
        role = _jit_role(tenant, identity.email)
        try:
            user = await identity_repo.create_user(
                tenant.id,
                NewUser(email=identity.email, role=role.value, password_hash=None, full_name=identity.name),
            )
            log.info("sso account provisioned", extra=fields(tenant_id=tenant.id, provider=identity.provider))
        except Conflict:  # a concurrent first sign-in created it
            user = next(u for u in await identity_repo.users_by_email(identity.email) if u.tenant_id == tenant.id)
    if not user.is_active:
        raise SsoError(403, "This account is blocked")
    return user
