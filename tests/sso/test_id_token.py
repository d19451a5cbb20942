"""ID token verification on real tokens from the loopback provider, and their tampered variants."""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

import httpx
import jwt
import pytest

from agentgov.security import sso
from agentgov.storage.cache import MemoryCache
from tests.sso.conftest import CALLBACK, CLIENTS, query_of, sso_settings
from tests.support.app import settings_for
from tests.support.oidc import OIDCProvider, drive_login


class Issued:
    """A real ID token for `nonce`, and what is needed to verify it."""

    def __init__(self, flow: sso.SsoFlow, provider: sso.Provider, metadata: dict[str, Any], token: str, nonce: str):
        self.flow, self.provider, self.metadata, self.token, self.nonce = flow, provider, metadata, token, nonce

    async def verify(self, token: str | None = None, *, nonce: str | None = None, **changes: Any) -> dict[str, Any]:
        provider = self.provider
        if "client_id" in changes:
            provider = dataclasses.replace(provider, client_id=changes.pop("client_id"))
        metadata = {**self.metadata, **changes}
        async with self.flow.http_client(provider, CALLBACK) as client:
            return await self.flow.verify_id_token(
                provider, metadata, client, token or self.token, self.nonce if nonce is None else nonce
            )


@pytest.fixture
async def issued(idp: OIDCProvider, browser: httpx.AsyncClient, tmp_path) -> Issued:
    settings = settings_for(
        f"sqlite:///{tmp_path / 'x.db'}", public_base_url="http://agentgov.test", sso=sso_settings(idp.issuer)
    )
    flow = sso.SsoFlow(settings, MemoryCache())
    binding = sso.new_binding()
    authorize_url = await flow.begin("oidc", callback_url=CALLBACK, redirect="/", tenant_hint=None, binding=binding)
    back = query_of(await drive_login(browser, authorize_url, "alice"))
    pending = sso.PendingSignIn.from_json(await flow._cache.get(sso.state_key(back["state"])))  # type: ignore[arg-type]
    provider = sso.get_provider(settings.sso, "oidc")
    async with flow.http_client(provider, CALLBACK) as client:
        metadata = await flow.metadata(provider, client)
        tokens = await client.fetch_token(
            metadata["token_endpoint"],
            grant_type="authorization_code",
            code=back["code"],
            code_verifier=pending.code_verifier,
        )
    return Issued(flow, provider, metadata, tokens["id_token"], pending.nonce)


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


async def test_a_genuine_token_verifies(issued: Issued) -> None:
    claims = await issued.verify()
    assert claims["sub"] == "alice" and claims["aud"] == CLIENTS["oidc"]["client_id"]
    assert claims["email"] == "alice@example.test" and claims["email_verified"] is True


async def _refused(issued: Issued, fragment: str, token: str | None = None, **kwargs: Any) -> None:
    with pytest.raises(sso.SsoError) as refused:
        await issued.verify(token, **kwargs)
    assert refused.value.status == 401
    assert fragment in refused.value.detail


async def test_tampered_tokens_are_refused(issued: Issued) -> None:
    header, payload, signature = issued.token.split(".")
    claims = jwt.decode(issued.token, options={"verify_signature": False})
    forged_payload = _b64({**claims, "email": "admin@acme.example"})
    await _refused(issued, "signature does not verify", f"{header}.{forged_payload}.{signature}")
    flipped = signature[:-4] + ("AAAA" if not signature.endswith("AAAA") else "BBBB")
    await _refused(issued, "signature does not verify", f"{header}.{payload}.{flipped}")
    await _refused(issued, "malformed", "not-a-jwt")
    # alg=none and a symmetric algorithm are never accepted, whatever the header says.
    none_header = _b64({"alg": "none", "typ": "JWT"})
    await _refused(issued, "algorithm 'none' is not accepted", f"{none_header}.{payload}.")
    hs = jwt.encode(
        claims,
        "a-guessable-secret-of-at-least-32-bytes",
        algorithm="HS256",
        headers={"kid": jwt.get_unverified_header(issued.token)["kid"]},
    )
    await _refused(issued, "algorithm 'HS256' is not accepted", hs)


async def test_wrong_nonce_audience_issuer_and_algorithm_are_refused(issued: Issued) -> None:
    await _refused(issued, "nonce does not match", nonce="another-sign-in")
    await _refused(issued, "issued to another client", client_id="someone-else")
    await _refused(issued, "another issuer", issuer="https://evil.example")
    await _refused(issued, "algorithm 'RS256' is not accepted", id_token_signing_alg_values_supported=["ES256"])


async def test_a_key_the_provider_does_not_publish_is_refused(issued: Issued) -> None:
    _, payload, signature = issued.token.split(".")
    other_kid = _b64({**jwt.get_unverified_header(issued.token), "kid": "rotated-away"})
    await _refused(issued, "key the identity provider does not publish", f"{other_kid}.{payload}.{signature}")
