"""Authentication and authorisation for every route, through one mechanism.

Each view is declared with `@authorize(Scheme..., permission=...)` or `@public`. The declaration is kept
on the view (`ROUTE_RULE_ATTR`) so tests can walk every route and check it against the permission matrix;
a route without a declaration is refused at start (`check_all_routes_declared`).

Missing credentials are a 401, credentials that do not verify a 401, and a verified principal without the
permission a 403. Schemes are tried in the order given; the first credential present decides.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from quart import Quart, current_app, g, request
from quart_schema.openapi import QUART_SCHEMA_SECURITY_ATTRIBUTE

from agentgov.http.errors import ApiError
from agentgov.security import api_keys
from agentgov.security.principal import Principal, PrincipalKind
from agentgov.security.roles import MINIMUM_ROLE, Permission, Role
from agentgov.security.tokens import InvalidToken
from agentgov.services import Services
from agentgov.timeutil import now_iso

F = TypeVar("F", bound=Callable[..., Any])
ROUTE_RULE_ATTR = "_agentgov_route_rule"
KEY_CACHE_TTL = 60.0


class Scheme(enum.Enum):
    API_KEY = "X-API-Key"
    BEARER = "Authorization"
    ADMIN_KEY = "X-Admin-Key"
    QUERY_TOKEN = "token"  # WebSocket: JWT access token in the `token` query parameter


_OPENAPI_NAMES = {
    Scheme.API_KEY: "ApiKey",
    Scheme.BEARER: "BearerJWT",
    Scheme.ADMIN_KEY: "AdminKey",
    Scheme.QUERY_TOKEN: "QueryToken",
}


@dataclasses.dataclass(frozen=True)
class RouteRule:
    schemes: tuple[Scheme, ...]
    permission: Permission | None
    tenant_scoped: bool


Resolver = Callable[[Services, str], Awaitable[Principal]]
_resolvers: dict[Scheme, Resolver] = {}


def register_resolver(scheme: Scheme, resolver: Resolver) -> None:
    """Install the function that turns a credential of `scheme` into a `Principal` (or raises 401)."""
    _resolvers[scheme] = resolver


def services() -> Services:
    return current_app.extensions["agentgov"]


def principal() -> Principal:
    """The authenticated principal of the current request (only inside an authorised view)."""
    return g.principal


def tenant_id() -> str:
    tid = principal().tenant_id
    if tid is None:
        raise ApiError(403, "This route acts on a tenant; authenticate with a tenant or user credential")
    return tid


def public(func: F) -> F:
    """Declare a view that needs no credentials."""
    setattr(func, ROUTE_RULE_ATTR, RouteRule((), None, False))
    return func


def authorize(*schemes: Scheme, permission: Permission | None, tenant_scoped: bool = True) -> Callable[[F], F]:
    """Declare and enforce how a view authenticates and which permission it needs.

    `tenant_scoped` views require a principal bound to a tenant (403 otherwise).
    """
    if not schemes:
        raise ValueError("authorize() needs at least one scheme; use @public for open routes")
    rule = RouteRule(tuple(schemes), permission, tenant_scoped)

    def decorator(func: F) -> F:
        @functools.wraps(func)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            g.principal = await admit(rule, request.headers.get, services())
            return await func(*args, **kwargs)

        setattr(wrapper, ROUTE_RULE_ATTR, rule)
        setattr(wrapper, QUART_SCHEMA_SECURITY_ATTRIBUTE, [{_OPENAPI_NAMES[s]: []} for s in schemes])
        return wrapper  # type: ignore[return-value]

    return decorator


def websocket_token(permission: Permission) -> Callable[[F], F]:
    """Declare a WebSocket route authenticated by `?token=<JWT>`; the view itself must call
    `authenticate_websocket_token` before accepting the connection (and refuse it on `ApiError`)."""

    def decorator(func: F) -> F:
        setattr(func, ROUTE_RULE_ATTR, RouteRule((Scheme.QUERY_TOKEN,), permission, True))
        return func

    return decorator


async def authenticate_websocket_token(token: str | None, permission: Permission) -> Principal:
    """Resolve a WebSocket's `token` query parameter. Raises `ApiError` 401 (missing/invalid/expired/revoked)
    or 403 (no permission or no tenant)."""
    if not token:
        raise ApiError(401, "Missing credentials: send ?token=<access token>")
    who = await resolve_access_token(services(), token)
    if not who.can(permission) or who.tenant_id is None:
        raise ApiError(403, f"Forbidden: {permission.value} on a tenant is required")
    return who


def rule_of(view: Callable[..., Any]) -> RouteRule:
    """The declaration `@authorize`/`@public` left on `view`. Raises `LookupError` if it has none."""
    rule = getattr(view, ROUTE_RULE_ATTR, None)
    if not isinstance(rule, RouteRule):
        raise LookupError(f"{getattr(view, '__name__', view)!r} has no auth declaration")
    return rule


async def admit(rule: RouteRule, header: Callable[[str], str | None], svc: Services) -> Principal:
    """The principal a request is allowed to act as under `rule`; `header(name)` reads a request header.

    Raises `ApiError`: 401 (credentials missing or not valid), 403 (no permission, or no tenant on a
    tenant-scoped route).
    """
    who = await authenticate(rule.schemes, header, svc)
    if rule.permission is not None and not who.can(rule.permission):
        raise ApiError(
            403,
            f"Forbidden: {rule.permission.value} requires a role of at least "
            f"{MINIMUM_ROLE[rule.permission].value} (you are {who.role.value})",
        )
    if rule.tenant_scoped and who.tenant_id is None:
        raise ApiError(403, "This route acts on a tenant; authenticate with a tenant or user credential")
    return who


async def authenticate(schemes: tuple[Scheme, ...], header: Callable[[str], str | None], svc: Services) -> Principal:
    """Resolve the first credential present among `schemes`. Raises `ApiError` 401."""
    for scheme in schemes:
        raw = header(scheme.value)
        if raw is None:
            continue
        resolver = _resolvers.get(scheme)
        if resolver is None:
            raise ApiError(401, f"{scheme.value} authentication is not available")
        return await resolver(svc, raw)
    names = " or ".join(s.value for s in schemes)
    raise ApiError(401, f"Missing credentials: send {names}")


async def resolve_admin_key(svc: Services, raw: str) -> Principal:
    if not hmac.compare_digest(raw.encode(), svc.settings.admin_key.encode()):
        raise ApiError(401, "Invalid admin key")
    return Principal(kind=PrincipalKind.ADMIN_KEY, role=Role.SUPER_ADMIN)


_KEY_KINDS = {
    "tenant": PrincipalKind.TENANT_KEY,
    "user": PrincipalKind.USER_KEY,
    "session": PrincipalKind.SESSION_KEY,
}


def key_cache_name(key_id: str) -> str:
    return f"apikey:{key_id}"


async def forget_keys(svc: Services, key_ids: list[str]) -> None:
    """Drop cached verifications so revoked or blocked keys stop working at once (on every process)."""
    for key_id in key_ids:
        await svc.cache.delete(key_cache_name(key_id))


async def resolve_api_key(svc: Services, raw: str) -> Principal:
    """Verify an API key (cached for `KEY_CACHE_TTL`; revocation deletes the cache entry)."""
    parts = api_keys.split(raw.strip())
    if parts is None:
        raise ApiError(401, "Invalid API key")
    key_id, secret = parts
    cached = await svc.cache.get(key_cache_name(key_id))
    if cached is not None:
        record = json.loads(cached)
    else:
        key = await svc.identity.get_api_key(key_id)
        if key is None:
            raise ApiError(401, "Invalid API key")
        active = key.revoked_at is None
        role = Role(key.role)
        if active and key.user_id is not None:
            user = await svc.identity.get_user(key.user_id)
            active = user is not None and user.is_active
            if user is not None and Role(user.role).rank < role.rank:
                role = Role(user.role)  # a demoted user's keys act with the user's current role
        record = {
            "tenant_id": key.tenant_id,
            "user_id": key.user_id,
            "kind": key.kind,
            "role": role.value,
            "hash": key.secret_hash,
            "expires_at": key.expires_at,
            "active": active,
        }
        await svc.cache.set(key_cache_name(key_id), json.dumps(record), ttl=KEY_CACHE_TTL)
    if not api_keys.matches(secret, record["hash"]) or not record["active"]:
        raise ApiError(401, "Invalid API key")
    if record["expires_at"] is not None and record["expires_at"] <= now_iso():
        raise ApiError(401, "API key has expired")
    return Principal(
        kind=_KEY_KINDS[record["kind"]],
        role=Role(record["role"]),
        tenant_id=record["tenant_id"] or None,
        user_id=record["user_id"],
        key_id=key_id,
    )


async def resolve_access_token(svc: Services, token: str) -> Principal:
    """Verify a JWT access token and that its user is still active. Raises `ApiError` 401."""
    try:
        claims = await svc.tokens.verify(token)
    except InvalidToken as exc:
        raise ApiError(401, f"Invalid access token: {exc}", headers={"WWW-Authenticate": "Bearer"}) from None
    user = await svc.identity.get_user(claims["sub"])
    if user is None or not user.is_active:
        raise ApiError(401, "Invalid access token: the user is blocked or deleted")
    return Principal(
        kind=PrincipalKind.USER_TOKEN,
        role=Role(user.role),
        tenant_id=user.tenant_id or None,
        user_id=user.id,
        key_id=claims.get("sid"),
        token_id=claims["jti"],
    )


async def resolve_bearer(svc: Services, header: str) -> Principal:
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "Authorization header must be 'Bearer <access token>'")
    return await resolve_access_token(svc, token.strip())


register_resolver(Scheme.BEARER, resolve_bearer)
register_resolver(Scheme.ADMIN_KEY, resolve_admin_key)
register_resolver(Scheme.API_KEY, resolve_api_key)


def check_all_routes_declared(app: Quart) -> None:
    """Raise `RuntimeError` naming any route whose view lacks an auth declaration."""
    missing = []
    for rule in app.url_map.iter_rules():
        view = app.view_functions.get(rule.endpoint)
        if view is None or rule.endpoint == "static" or rule.endpoint.startswith("_docs"):
            continue
        if not hasattr(view, ROUTE_RULE_ATTR) and rule.endpoint not in _SCHEMA_ENDPOINTS:
            missing.append(f"{rule.rule} ({rule.endpoint})")
    if missing:
        raise RuntimeError("routes without an auth declaration: " + ", ".join(sorted(missing)))


_SCHEMA_ENDPOINTS = {"openapi", "swagger_ui", "redoc_ui", "scalar_ui"}
