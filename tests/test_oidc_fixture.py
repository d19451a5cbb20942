"""The loopback OpenID Connect provider fixture (tests/support/oidc.py) works end to end.

The relying-party side here is written by hand with httpx and PyJWT, step by step, so that a
failure points at the provider fixture rather than at the SSO feature built on top of it.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
import pytest
import trio

from tests.support.oidc import (
    OIDCProvider,
    OIDCProviderStartError,
    drive_login,
    oidc_client,
    require_oidc_provider,
    run_oidc_provider,
)

# Never fetched: drive_login stops at the redirect to it.
REDIRECT_URI = "http://127.0.0.1:9/sso/callback"
BASIC_CLIENT = oidc_client("rp-basic", REDIRECT_URI, token_endpoint_auth_method="client_secret_basic")
POST_CLIENT = oidc_client("rp-post", REDIRECT_URI, token_endpoint_auth_method="client_secret_post")


@pytest.fixture(scope="session")
def oidc_ready() -> None:
    require_oidc_provider()


@pytest.fixture
async def idp(oidc_ready: None) -> Any:
    async with run_oidc_provider([BASIC_CLIENT, POST_CLIENT]) as provider:
        yield provider


@pytest.fixture
async def http() -> Any:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


def pkce_pair() -> tuple[str, str]:
    """A PKCE code_verifier and its S256 code_challenge."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass
class AuthRequest:
    url: str
    state: str
    nonce: str
    code_verifier: str


def authorization_request(metadata: dict[str, Any], client_id: str, *, pkce: bool = True) -> AuthRequest:
    state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    verifier, challenge = pkce_pair()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "scope": "openid email profile",
        "state": state,
        "nonce": nonce,
    }
    if pkce:
        params.update(code_challenge=challenge, code_challenge_method="S256")
    return AuthRequest(f"{metadata['authorization_endpoint']}?{urlencode(params)}", state, nonce, verifier)


def callback_params(url: str) -> dict[str, str]:
    assert url.startswith(REDIRECT_URI + "?"), url
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


async def exchange_code(
    http: httpx.AsyncClient, metadata: dict[str, Any], client: dict[str, Any], code: str, verifier: str
) -> httpx.Response:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT_URI,
        "code_verifier": verifier,
    }
    auth = None
    if client["token_endpoint_auth_method"] == "client_secret_post":
        data.update(client_id=client["client_id"], client_secret=client["client_secret"])
    else:
        auth = httpx.BasicAuth(client["client_id"], client["client_secret"])
    return await http.post(metadata["token_endpoint"], data=data, auth=auth)


async def discover(http: httpx.AsyncClient, idp: OIDCProvider) -> dict[str, Any]:
    response = await http.get(idp.discovery_url)
    response.raise_for_status()
    metadata = response.json()
    assert metadata["issuer"] == idp.issuer
    assert "S256" in metadata["code_challenge_methods_supported"]
    assert {"openid", "email", "profile"} <= set(metadata["scopes_supported"])
    return metadata


@pytest.mark.parametrize(
    ("client", "login", "email", "email_verified"),
    [
        (BASIC_CLIENT, "alice", "alice@example.test", True),
        (POST_CLIENT, "carol@corp.example", "carol@corp.example", True),
        (BASIC_CLIENT, "unverified-bob", "unverified-bob@example.test", False),
    ],
    ids=["basic-auth", "post-auth-email-login", "unverified-email"],
)
async def test_authorization_code_flow(
    idp: OIDCProvider,
    http: httpx.AsyncClient,
    client: dict[str, Any],
    login: str,
    email: str,
    email_verified: bool,
) -> None:
    metadata = await discover(http, idp)
    request = authorization_request(metadata, client["client_id"])

    callback = callback_params(await drive_login(http, request.url, login))
    assert callback["state"] == request.state
    assert callback["iss"] == idp.issuer  # RFC 9207 authorization response issuer
    assert "error" not in callback

    response = await exchange_code(http, metadata, client, callback["code"], request.code_verifier)
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["token_type"].lower() == "bearer"

    jwks = jwt.PyJWKSet.from_dict((await http.get(metadata["jwks_uri"])).json())
    signing_key = jwks[jwt.get_unverified_header(tokens["id_token"])["kid"]]
    claims = jwt.decode(
        tokens["id_token"],
        key=signing_key,
        algorithms=metadata["id_token_signing_alg_values_supported"],
        audience=client["client_id"],
        issuer=idp.issuer,
        options={"require": ["exp", "iat", "iss", "aud", "sub", "nonce"]},
    )
    assert claims["nonce"] == request.nonce
    assert claims["sub"] == login
    assert claims["email"] == email
    assert claims["email_verified"] is email_verified

    userinfo = await http.get(
        metadata["userinfo_endpoint"], headers={"Authorization": f"Bearer {tokens['access_token']}"}
    )
    assert userinfo.status_code == 200, userinfo.text
    assert userinfo.json() == {
        "sub": login,
        "email": email,
        "email_verified": email_verified,
        "name": login,
        "preferred_username": login,
    }

    # The code is single-use.
    replay = await exchange_code(http, metadata, client, callback["code"], request.code_verifier)
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"


async def test_wrong_code_verifier_is_rejected(idp: OIDCProvider, http: httpx.AsyncClient) -> None:
    metadata = await discover(http, idp)
    request = authorization_request(metadata, POST_CLIENT["client_id"])
    callback = callback_params(await drive_login(http, request.url, "mallory"))

    wrong_verifier, _ = pkce_pair()
    response = await exchange_code(http, metadata, POST_CLIENT, callback["code"], wrong_verifier)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


async def test_pkce_is_required(idp: OIDCProvider, http: httpx.AsyncClient) -> None:
    metadata = await discover(http, idp)
    request = authorization_request(metadata, BASIC_CLIENT["client_id"], pkce=False)
    callback = callback_params(await drive_login(http, request.url, "alice"))
    assert callback["error"] == "invalid_request"
    assert "PKCE" in callback["error_description"]
    assert callback["state"] == request.state


async def test_existing_session_skips_login_and_consent(idp: OIDCProvider, http: httpx.AsyncClient) -> None:
    metadata = await discover(http, idp)
    first = authorization_request(metadata, BASIC_CLIENT["client_id"])
    await drive_login(http, first.url, "alice")

    # Same cookie jar: the provider's session and grant are reused, so the login name given here
    # is never asked for, and the second code still belongs to alice.
    second = authorization_request(metadata, BASIC_CLIENT["client_id"])
    callback = callback_params(await drive_login(http, second.url, "ignored"))
    response = await exchange_code(http, metadata, BASIC_CLIENT, callback["code"], second.code_verifier)
    assert response.status_code == 200, response.text
    assert jwt.decode(response.json()["id_token"], options={"verify_signature": False})["sub"] == "alice"


async def test_provider_stops_on_exit_and_on_cancellation(oidc_ready: None, http: httpx.AsyncClient) -> None:
    async with run_oidc_provider([BASIC_CLIENT]) as provider:
        assert (await http.get(provider.discovery_url)).status_code == 200
    assert provider.process.returncode is not None
    with pytest.raises(httpx.ConnectError):
        await http.get(provider.discovery_url)

    with trio.CancelScope() as scope:
        async with run_oidc_provider([BASIC_CLIENT]) as provider:
            scope.cancel()
            await trio.lowlevel.checkpoint()
    assert scope.cancelled_caught
    assert provider.process.returncode is not None


async def test_invalid_client_metadata_fails_the_start(oidc_ready: None) -> None:
    bad_client = {"client_id": "broken", "client_secret": "x", "redirect_uris": ["not a url"]}
    with pytest.raises(OIDCProviderStartError, match="broken"):
        async with run_oidc_provider([bad_client]):
            pytest.fail("the provider should not have started")
