"""Single sign-on providers: the settings each needs, their issuers, and the errors of the flow."""

from __future__ import annotations

import dataclasses
import logging
import re
from urllib.parse import quote

from agentgov.config import SsoSettings
from agentgov.security.roles import Role

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
