"""Single sign-on (OpenID Connect): list providers, start a sign-in, take the provider's callback, and trade
the one-time `sso_code` for a login session. All four routes are public; see docs/sso.md.

Failures are JSON errors with a `detail`: 422 for a malformed query or body (an unknown provider, a
`redirect` that is not a same-site relative path), 400 for a disabled provider or a callback/code that is
unknown, tampered, expired or replayed, 401 for an ID token that does not verify, 403 for an unverified
email, an unknown account (or tenant hint) or a blocked user, 409 for an email in several tenants without
a hint, 502 when the identity provider cannot be used.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field
from quart import Blueprint, Response, current_app, request, url_for
from quart_schema import document_response, tag

from agentgov.http.auth import public, services
from agentgov.http.errors import ApiError
from agentgov.http.routes.auth import LoginResponse
from agentgov.http.schemas import RequestModel
from agentgov.http.validation import json_body, query
from agentgov.logs import fields
from agentgov.security import sso
from agentgov.security.sessions import create_session
from agentgov.siem import outbox as siem
from agentgov.siem.events import sso_failure

bp = Blueprint("sso", __name__)
log = logging.getLogger("agentgov.sso")

_FLOW_EXTENSION = "agentgov.sso"


class ProviderOut(BaseModel):
    id: str
    name: str
    enabled: bool


class ProvidersOut(BaseModel):
    providers: list[ProviderOut]


class LoginQuery(BaseModel):
    provider: Literal["google", "microsoft", "okta", "oidc"] = Field(description="The identity provider")
    redirect: Annotated[str, AfterValidator(sso.safe_redirect_path)] = Field(
        default=sso.DEFAULT_REDIRECT, description="Same-site path the frontend opens after the sign-in"
    )
    tenant: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Tenant id or name: needed when the email exists in several tenants, or to sign up",
    )


class CallbackQuery(BaseModel):
    code: str | None = Field(default=None, max_length=4096)
    state: str | None = Field(default=None, max_length=512)
    iss: str | None = Field(default=None, max_length=2048)
    error: str | None = Field(default=None, max_length=512)
    error_description: str | None = Field(default=None, max_length=4096)


class ExchangeRequest(RequestModel):
    code: str = Field(min_length=1, max_length=512, description="The one-time sso_code from the callback")


def _flow() -> sso.SsoFlow:
    """The app's `SsoFlow` (one per app: it keeps discovery documents and signing keys)."""
    flow = current_app.extensions.get(_FLOW_EXTENSION)
    if flow is None:
        svc = services()
        flow = current_app.extensions[_FLOW_EXTENSION] = sso.SsoFlow(svc.settings, svc.cache)
    return flow


def _callback_url() -> str:
    base = services().settings.public_base_url or request.host_url.rstrip("/")
    return base + url_for("sso.callback")


def _redirect(location: str) -> Response:
    """A 302 to `location` that no cache keeps."""
    return Response("", 302, {"Location": location, "Cache-Control": "no-store"})


def _api_error(exc: sso.SsoError) -> ApiError:
    log.info("sso refused", extra=fields(path=request.path, status=exc.status, detail=exc.detail))
    siem.record(services(), sso_failure(exc.detail, exc.status, request.path, request.remote_addr or "unknown"))
    return ApiError(exc.status, exc.detail)


@bp.get("/auth/sso/providers")
@public
@tag(["auth"])
@document_response(ProvidersOut)
async def list_providers() -> dict[str, Any]:
    """The identity providers this server knows, and whether each is enabled."""
    providers = sso.providers(services().settings.sso)
    return {"providers": [{"id": p.id, "name": p.name, "enabled": p.enabled} for p in providers]}


@bp.get("/auth/sso/login")
@public
@tag(["auth"])
@query(LoginQuery)
async def login(query: LoginQuery) -> Response:
    """Start a sign-in: 302 to the provider's authorization endpoint (state, nonce, PKCE S256).

    Sets a short-lived, HttpOnly cookie that binds the sign-in to this browser.
    """
    svc = services()
    binding = request.cookies.get(sso.BINDING_COOKIE)
    if binding is None or not sso.valid_binding(binding):
        binding = sso.new_binding()
    callback_url = _callback_url()
    try:
        location = await _flow().begin(
            query.provider,
            callback_url=callback_url,
            redirect=query.redirect,
            tenant_hint=query.tenant,
            binding=binding,
        )
    except sso.SsoError as exc:
        raise _api_error(exc) from None
    response = _redirect(location)
    response.set_cookie(
        sso.BINDING_COOKIE,
        binding,
        max_age=int(svc.settings.sso.state_ttl),
        path=url_for("sso.callback").rsplit("/", 1)[0],
        secure=callback_url.startswith("https://"),
        httponly=True,
        samesite="Lax",
    )
    return response


@bp.get("/auth/sso/callback")
@public
@tag(["auth"])
@query(CallbackQuery)
async def callback(query: CallbackQuery) -> Response:
    """The identity provider's redirect: verify it, then 302 to the frontend with a one-time `sso_code`."""
    svc = services()
    flow = _flow()
    params = sso.CallbackParams(**query.model_dump())
    try:
        pending, identity = await flow.complete(params, binding=request.cookies.get(sso.BINDING_COOKIE))
        user = await sso.link_account(svc.identity, identity, pending.tenant_hint)
    except sso.SsoError as exc:
        raise _api_error(exc) from None
    code = await flow.issue_code(user.id)
    response = _redirect(sso.frontend_location(svc.settings, pending.redirect, code))
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@bp.post("/auth/sso/exchange")
@public
@tag(["auth"])
@json_body(ExchangeRequest)
@document_response(LoginResponse)
async def exchange(data: ExchangeRequest) -> dict[str, Any]:
    """Trade the one-time `sso_code` for a login session (the same answer as a password login)."""
    svc = services()
    try:
        user_id = await _flow().redeem_code(data.code)
    except sso.SsoError as exc:
        raise _api_error(exc) from None
    user = await svc.identity.get_user(user_id)
    if user is None or not user.is_active:
        raise ApiError(401, "This account is blocked or was deleted since the sign-in")
    return await create_session(svc, user)
