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

from agentgov.security.sso.flow import (
    SsoFlow,
)
from agentgov.security.sso.linking import (
    find_tenant,
    link_account,
)
from agentgov.security.sso.providers import (
    ASYMMETRIC_ALGORITHMS,
    BINDING_COOKIE,
    CLOCK_LEEWAY,
    DEFAULT_REDIRECT,
    GOOGLE_ISSUER,
    HTTP_TIMEOUT,
    JIT_ROLES,
    JWKS_MIN_REFRESH,
    MAX_REDIRECT_LENGTH,
    METADATA_TTL,
    MICROSOFT_AUTHORITY,
    PROVIDER_IDS,
    SCOPES,
    WELL_KNOWN,
    Provider,
    SsoError,
    get_provider,
    microsoft_issuer,
    okta_issuer,
    providers,
)
from agentgov.security.sso.records import (
    CallbackParams,
    PendingSignIn,
    VerifiedIdentity,
    code_key,
    frontend_location,
    new_binding,
    safe_redirect_path,
    state_key,
    valid_binding,
)

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "BINDING_COOKIE",
    "CLOCK_LEEWAY",
    "DEFAULT_REDIRECT",
    "GOOGLE_ISSUER",
    "HTTP_TIMEOUT",
    "JIT_ROLES",
    "JWKS_MIN_REFRESH",
    "MAX_REDIRECT_LENGTH",
    "METADATA_TTL",
    "MICROSOFT_AUTHORITY",
    "PROVIDER_IDS",
    "SCOPES",
    "WELL_KNOWN",
    "CallbackParams",
    "PendingSignIn",
    "Provider",
    "SsoError",
    "SsoFlow",
    "VerifiedIdentity",
    "code_key",
    "find_tenant",
    "frontend_location",
    "get_provider",
    "link_account",
    "microsoft_issuer",
    "new_binding",
    "okta_issuer",
    "providers",
    "safe_redirect_path",
    "state_key",
    "valid_binding",
]
