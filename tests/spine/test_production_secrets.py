"""Production refuses every secret a deployment cannot mean: development defaults (also as previous JWT
secrets), short values, and values made only of whitespace."""

from __future__ import annotations

import pytest

from agentgov.config import (
    DEFAULT_ADMIN_KEY,
    DEFAULT_JWT_SECRET,
    DEFAULT_WEBHOOK_SECRET,
    ConfigError,
    Settings,
)
from agentgov.security.tokens import InvalidToken, TokenService
from agentgov.storage.cache import MemoryCache

STRONG = {
    "ADMIN_KEY": "a" * 32,
    "JWT_SECRET": "b" * 32,
    "WEBHOOK_SECRET": "c" * 32,
    "AUDIT_SECRET": "d" * 32,
    "EXPORT_SIGNING_KEY": "ZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWU=",
}
DEFAULTS = [DEFAULT_ADMIN_KEY, DEFAULT_JWT_SECRET, DEFAULT_WEBHOOK_SECRET]


@pytest.mark.parametrize("default", DEFAULTS)
def test_production_refuses_a_development_default_as_a_previous_jwt_secret(default: str) -> None:
    env = {"ENV": "production", **STRONG, "JWT_PREVIOUS_SECRETS": f"{'e' * 32},{default}"}
    with pytest.raises(ConfigError, match="JWT_PREVIOUS_SECRETS is a public development default"):
        Settings.from_env(env)


@pytest.mark.parametrize(("value", "problem"), [("short", "too short"), (" " * 20, "only whitespace")])
def test_production_checks_every_previous_jwt_secret(value: str, problem: str) -> None:
    env = {"ENV": "production", **STRONG, "JWT_PREVIOUS_SECRETS": f"{'e' * 32},{value}"}
    with pytest.raises(ConfigError, match=f"JWT_PREVIOUS_SECRETS is {problem}"):
        Settings.from_env(env)


@pytest.mark.parametrize("name", ["ADMIN_KEY", "JWT_SECRET", "WEBHOOK_SECRET", "AUDIT_SECRET"])
@pytest.mark.parametrize("environment", ["production", "development"])
def test_a_whitespace_only_secret_is_refused(name: str, environment: str) -> None:
    env = {"ENV": environment, **STRONG, name: " " * 20}
    with pytest.raises(ConfigError, match=f"{name} is only whitespace"):
        Settings.from_env(env)


@pytest.mark.parametrize("name", ["ADMIN_KEY", "JWT_SECRET", "WEBHOOK_SECRET", "AUDIT_SECRET"])
@pytest.mark.parametrize("default", DEFAULTS)
def test_production_refuses_any_development_default_in_any_secret(name: str, default: str) -> None:
    env = {"ENV": "production", **STRONG, name: default}
    with pytest.raises(ConfigError, match=name):
        Settings.from_env(env)


async def test_a_token_forged_with_the_development_default_is_refused_after_rotation() -> None:
    """The attack: sign a Super Admin token with the public default. The production service never holds
    that key; a token signed with a real previous secret still verifies (rotation keeps working)."""
    previous = "p" * 32
    settings = Settings.from_env({"ENV": "production", **STRONG, "JWT_PREVIOUS_SECRETS": previous})
    service = TokenService(settings, MemoryCache())

    def issued_with(secret: str) -> str:
        signer = TokenService(Settings.from_env({"JWT_SECRET": secret}), MemoryCache())
        return signer.issue(user_id="u-1", tenant_id=None, role="Super Admin", session_key_id=None).token

    with pytest.raises(InvalidToken, match="unknown key"):
        await service.verify(issued_with(DEFAULT_JWT_SECRET))
    claims = await service.verify(issued_with(previous))
    assert claims["role"] == "Super Admin" and claims["sub"] == "u-1"


def test_development_keeps_working_with_its_defaults() -> None:
    settings = Settings.from_env({"JWT_PREVIOUS_SECRETS": DEFAULT_WEBHOOK_SECRET})
    assert settings.jwt_previous_secrets == (DEFAULT_WEBHOOK_SECRET,)
