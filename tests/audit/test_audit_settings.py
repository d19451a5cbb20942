"""AUDIT_SECRET: required in production, falls back to JWT_SECRET in development."""

from __future__ import annotations

import pytest

from agentgov.config import ConfigError, Settings

PRODUCTION = {
    "ENV": "production",
    "ADMIN_KEY": "a" * 32,
    "JWT_SECRET": "b" * 32,
    "WEBHOOK_SECRET": "c" * 32,
    "EXPORT_SIGNING_KEY": "ZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWU=",
}


def test_production_needs_a_strong_audit_secret() -> None:
    with pytest.raises(ConfigError, match="AUDIT_SECRET is missing"):
        Settings.from_env(PRODUCTION)
    with pytest.raises(ConfigError, match="AUDIT_SECRET is too short"):
        Settings.from_env({**PRODUCTION, "AUDIT_SECRET": "short"})
    settings = Settings.from_env({**PRODUCTION, "AUDIT_SECRET": "d" * 32})
    assert settings.effective_audit_secret == "d" * 32


def test_development_falls_back_to_the_jwt_secret() -> None:
    settings = Settings.from_env({"JWT_SECRET": "j" * 20})
    assert settings.audit_secret == "" and settings.effective_audit_secret == "j" * 20
    assert Settings.from_env({"AUDIT_SECRET": "x" * 20}).effective_audit_secret == "x" * 20
