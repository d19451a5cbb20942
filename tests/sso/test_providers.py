"""Provider registry, settings, redirect validation and issuer rules (no network)."""

from __future__ import annotations

import pytest

from agentgov.config import ConfigError, Settings, SsoSettings
from agentgov.security import sso
from agentgov.security.sso import flow as sso_flow

GOOGLE = {"SSO_GOOGLE_CLIENT_ID": "g-id", "SSO_GOOGLE_CLIENT_SECRET": "g-secret"}


def by_id(env: dict[str, str]) -> dict[str, sso.Provider]:
    return {p.id: p for p in sso.providers(Settings.from_env(env).sso)}


def test_nothing_configured_means_four_disabled_providers() -> None:
    providers = sso.providers(Settings.from_env({}).sso)
    assert [(p.id, p.name, p.enabled) for p in providers] == [
        ("google", "Google", False),
        ("microsoft", "Microsoft Entra ID", False),
        ("okta", "Okta", False),
        ("oidc", "OpenID Connect", False),
    ]
    assert providers[0].missing == ("SSO_GOOGLE_CLIENT_ID", "SSO_GOOGLE_CLIENT_SECRET")
    assert providers[1].missing == (
        "SSO_MICROSOFT_CLIENT_ID",
        "SSO_MICROSOFT_CLIENT_SECRET",
        "SSO_MICROSOFT_TENANT or SSO_MICROSOFT_DISCOVERY_URL",
    )


def test_google_has_a_fixed_issuer_and_an_overridable_discovery_url() -> None:
    google = by_id(GOOGLE)["google"]
    assert google.enabled
    assert google.issuer == "https://accounts.google.com"
    assert google.discovery_url == "https://accounts.google.com/.well-known/openid-configuration"
    assert not google.discovery_override
    moved = by_id({**GOOGLE, "SSO_GOOGLE_DISCOVERY_URL": "http://127.0.0.1:5556/.well-known/openid-configuration"})
    assert moved["google"].discovery_url == "http://127.0.0.1:5556/.well-known/openid-configuration"
    assert moved["google"].discovery_override


@pytest.mark.parametrize(
    ("tenant", "issuer"),
    [
        ("contoso.onmicrosoft.com", "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0"),
        (
            "9188040d-6c67-4c5b-b112-36a304b66dad",
            "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0",
        ),
        ("organizations", "https://login.microsoftonline.com/organizations/v2.0"),
        ("a/b?c", "https://login.microsoftonline.com/a%2Fb%3Fc/v2.0"),
    ],
)
def test_microsoft_issuer_comes_from_the_directory(tenant: str, issuer: str) -> None:
    env = {"SSO_MICROSOFT_CLIENT_ID": "m", "SSO_MICROSOFT_CLIENT_SECRET": "s", "SSO_MICROSOFT_TENANT": tenant}
    microsoft = by_id(env)["microsoft"]
    assert microsoft.enabled
    assert microsoft.issuer == issuer
    assert microsoft.discovery_url == issuer + "/.well-known/openid-configuration"


@pytest.mark.parametrize(
    ("value", "discovery"),
    [
        ("dev-123.okta.com", "https://dev-123.okta.com/.well-known/openid-configuration"),
        ("https://dev-123.okta.com/", "https://dev-123.okta.com/.well-known/openid-configuration"),
        (
            "https://dev-123.okta.com/oauth2/default",
            "https://dev-123.okta.com/oauth2/default/.well-known/openid-configuration",
        ),
    ],
)
def test_okta_takes_a_domain_or_an_issuer(value: str, discovery: str) -> None:
    okta = by_id({"SSO_OKTA_CLIENT_ID": "o", "SSO_OKTA_CLIENT_SECRET": "s", "SSO_OKTA_ISSUER": value})["okta"]
    assert okta.enabled and okta.discovery_url == discovery


def test_generic_provider_by_issuer_or_discovery_url_and_its_name() -> None:
    base = {"SSO_OIDC_CLIENT_ID": "agentgov", "SSO_OIDC_CLIENT_SECRET": "s"}
    by_issuer = by_id({**base, "SSO_OIDC_ISSUER": "https://sso.corp.example/realms/main/"})["oidc"]
    assert by_issuer.issuer == "https://sso.corp.example/realms/main"
    assert by_issuer.discovery_url == "https://sso.corp.example/realms/main/.well-known/openid-configuration"
    by_url = by_id({**base, "SSO_OIDC_DISCOVERY_URL": "https://sso.corp.example/x/.well-known/openid-configuration"})
    assert by_url["oidc"].enabled and by_url["oidc"].issuer == "" and by_url["oidc"].discovery_override
    named = by_id({**base, "SSO_OIDC_ISSUER": "https://kc.example", "SSO_OIDC_NAME": "Keycloak"})["oidc"]
    assert named.name == "Keycloak"
    secret = by_id({**base, "SSO_OIDC_CLIENT_SECRET": "hunter2-sso", "SSO_OIDC_ISSUER": "https://kc.example"})
    assert "hunter2-sso" not in repr(secret["oidc"])


def test_get_provider_refuses_unknown_and_disabled() -> None:
    settings = Settings.from_env(GOOGLE).sso
    assert sso.get_provider(settings, "google").id == "google"
    with pytest.raises(sso.SsoError) as unknown:
        sso.get_provider(settings, "github")
    assert unknown.value.status == 404
    with pytest.raises(sso.SsoError) as disabled:
        sso.get_provider(settings, "okta")
    assert disabled.value.status == 400 and "SSO_OKTA_CLIENT_ID" in disabled.value.detail


def test_settings_from_env() -> None:
    settings = Settings.from_env(
        {
            "SSO_FRONTEND_URL": "https://app.example/",
            "SSO_STATE_TTL": "120",
            "SSO_CODE_TTL": "15",
            "SSO_OIDC_CLIENT_ID": " padded ",
        }
    ).sso
    assert settings == SsoSettings(
        frontend_url="https://app.example", state_ttl=120.0, code_ttl=15.0, oidc_client_id="padded"
    )
    assert Settings.from_env({}).sso == SsoSettings()


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SSO_FRONTEND_URL", "app.example", "SSO_FRONTEND_URL must be an http:// or https:// URL"),
        ("SSO_OIDC_ISSUER", "ftp://kc.example", "SSO_OIDC_ISSUER must be an http:// or https:// URL"),
        ("SSO_GOOGLE_DISCOVERY_URL", "/local", "SSO_GOOGLE_DISCOVERY_URL must be an http"),
        ("SSO_CODE_TTL", "0", "SSO_CODE_TTL must be positive"),
        ("SSO_STATE_TTL", "soon", "SSO_STATE_TTL must be a number"),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.from_env({name: value})


@pytest.mark.parametrize("path", ["/", "/dashboard", "/agents/42?tab=risk&x=%2F%2Fa", "/#/hash-route", "/a:b"])
def test_safe_redirects(path: str) -> None:
    assert sso.safe_redirect_path(path) == path


@pytest.mark.parametrize(
    "path",
    [
        "",
        "dashboard",
        "//evil.example",
        "///evil.example",
        "/\\evil.example",
        "https://evil.example/",
        "http:/evil.example",
        "javascript:alert(1)",
        "/a\tb",
        "/a\nb",
        "/a\x00",
        "/" + "a" * 2048,
    ],
)
def test_unsafe_redirects(path: str) -> None:
    with pytest.raises(ValueError):
        sso.safe_redirect_path(path)


def test_frontend_location() -> None:
    base = Settings.from_env({"PUBLIC_BASE_URL": "https://agentgov.example"})
    assert sso.frontend_location(base, "/dashboard", "c0de") == "https://agentgov.example/dashboard?sso_code=c0de"
    frontend = Settings.from_env(
        {"PUBLIC_BASE_URL": "https://api.example", "SSO_FRONTEND_URL": "https://ui.example/app"}
    )
    assert sso.frontend_location(frontend, "/x?a=1#f", "c") == "https://ui.example/app/x?a=1&sso_code=c#f"
    assert sso.frontend_location(Settings.from_env({}), "/d", "c") == "/d?sso_code=c"


def test_accepted_issuers() -> None:
    accepted = sso_flow._accepted_issuers
    assert accepted("https://accounts.google.com", {}) == {"https://accounts.google.com", "accounts.google.com"}
    template = "https://login.microsoftonline.com/{tenantid}/v2.0"
    assert accepted(template, {"tid": "abc"}) == {"https://login.microsoftonline.com/abc/v2.0"}
    assert accepted(template, {}) == set()
    assert accepted("https://kc.example/realms/main", {}) == {"https://kc.example/realms/main"}


def test_email_verification_rules() -> None:
    oidc = sso.providers(SsoSettings(oidc_client_id="a", oidc_client_secret="b", oidc_issuer="https://kc.example"))[3]
    microsoft = sso.providers(SsoSettings())[1]
    good = {"sub": "1", "email": "a@b.example", "email_verified": True, "name": " A "}
    assert sso_flow._identity(oidc, good) == sso.VerifiedIdentity("oidc", "1", "a@b.example", "A")
    assert sso_flow._identity(oidc, {**good, "email_verified": "true"}).email == "a@b.example"
    for claims in ({**good, "email_verified": False}, {**good, "email_verified": "yes"}, {"sub": "1", "email": "a@b"}):
        with pytest.raises(sso.SsoError) as refused:
            sso_flow._identity(oidc, claims)
        assert refused.value.status == 403
    with pytest.raises(sso.SsoError):
        sso_flow._identity(oidc, {"sub": "1", "email_verified": True})
    # Entra ID marks a verified email domain with xms_edov instead of email_verified.
    entra = {"sub": "1", "email": "a@b.example", "xms_edov": True}
    assert sso_flow._identity(microsoft, entra).email == "a@b.example"
    with pytest.raises(sso.SsoError):
        sso_flow._identity(oidc, entra)
