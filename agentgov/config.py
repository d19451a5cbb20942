"""Settings, read once at start from the environment (and command-line flags) and validated.

`Settings.from_env()` never returns an unusable configuration: in production it raises `ConfigError`
naming the first missing or default secret; in development it fills secrets with generated (admin key)
or fixed development values and records a warning for each, which `run.py` logs.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

DEFAULT_WEBHOOK_SECRET = "change-me-webhook-secret"
DEFAULT_JWT_SECRET = "change-me-jwt-secret"
DEFAULT_ADMIN_KEY = "change-me-admin-key"
_DEFAULT_SECRETS = {
    "ADMIN_KEY": DEFAULT_ADMIN_KEY,
    "JWT_SECRET": DEFAULT_JWT_SECRET,
    "WEBHOOK_SECRET": DEFAULT_WEBHOOK_SECRET,
}
MIN_SECRET_LENGTH = 16


class ConfigError(ValueError):
    """A setting is missing or invalid; the message names the setting."""


@dataclasses.dataclass(frozen=True)
class Settings:
    env: str = "development"
    host: str = "127.0.0.1"
    port: int = 8000
    data_dir: Path = Path("./data")
    database_url: str = ""
    redis_url: str = ""
    redis_prefix: str = "agentgov:"
    admin_key: str = DEFAULT_ADMIN_KEY
    jwt_secret: str = DEFAULT_JWT_SECRET
    webhook_secret: str = DEFAULT_WEBHOOK_SECRET
    log_format: str = "text"
    log_level: str = "INFO"
    graceful_timeout: float = 10.0
    mailbox_capacity: int = 1024
    actor_idle_timeout: float = 300.0
    db_pool_size: int = 8
    access_token_ttl: float = 3600.0
    jwt_previous_secrets: tuple[str, ...] = ()
    superadmin_email: str = ""
    superadmin_password: str = ""
    public_base_url: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def is_production(self) -> bool:
        return self.env == "production"

    @property
    def effective_database_url(self) -> str:
        """The database URL; the default is an SQLite file under `data_dir`."""
        return self.database_url or f"sqlite:///{self.data_dir / 'agentgov.db'}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Build settings from `environ` (default `os.environ`) with `overrides` (e.g. CLI flags) on top.

        Raises `ConfigError` for a bad value, or in production for a missing or default secret.
        """
        env = dict(os.environ if environ is None else environ)
        environment = env.get("ENV", "development").strip().lower()
        if environment not in ("development", "production"):
            raise ConfigError(f"ENV must be 'development' or 'production', not {environment!r}")
        log_format = env.get("LOG_FORMAT", "text").strip().lower()
        if log_format not in ("text", "json"):
            raise ConfigError(f"LOG_FORMAT must be 'text' or 'json', not {log_format!r}")
        warnings: list[str] = []
        values: dict[str, object] = {
            "env": environment,
            "data_dir": Path(env.get("DATA_DIR", "./data")),
            "database_url": env.get("DATABASE_URL", ""),
            "redis_url": env.get("REDIS_URL", ""),
            "redis_prefix": env.get("REDIS_PREFIX", "agentgov:"),
            "log_format": log_format,
            "log_level": env.get("LOG_LEVEL", "INFO").upper(),
            "graceful_timeout": _number(env, "GRACEFUL_TIMEOUT", 10.0),
            "mailbox_capacity": int(_number(env, "MAILBOX_CAPACITY", 1024)),
            "actor_idle_timeout": _number(env, "ACTOR_IDLE_TIMEOUT", 300.0),
            "db_pool_size": int(_number(env, "DB_POOL_SIZE", 8)),
            "access_token_ttl": _number(env, "ACCESS_TOKEN_TTL", 3600.0),
            "jwt_previous_secrets": tuple(s for s in env.get("JWT_PREVIOUS_SECRETS", "").split(",") if s.strip()),
            "superadmin_email": env.get("SUPERADMIN_EMAIL", "").strip(),
            "superadmin_password": env.get("SUPERADMIN_PASSWORD", ""),
            "public_base_url": env.get("PUBLIC_BASE_URL", "").rstrip("/"),
        }
        for name, default in _DEFAULT_SECRETS.items():
            value = env.get(name, "")
            if value and value != default and len(value) < MIN_SECRET_LENGTH and environment == "production":
                raise ConfigError(f"{name} is too short: use at least {MIN_SECRET_LENGTH} characters")
            if not value or value == default:
                if environment == "production":
                    state = "missing" if not value else "still the default value"
                    raise ConfigError(f"{name} is {state}; set a strong random value in production")
                if name == "ADMIN_KEY" and not value:
                    value = secrets.token_urlsafe(24)
                    warnings.append(f"ADMIN_KEY is not set; generated admin key for this run: {value}")
                else:
                    value = value or default
                    warnings.append(f"{name} uses the development default; set it before production use")
            values[name.lower()] = value
        values.update({k: v for k, v in overrides.items() if v is not None})
        url = str(values["database_url"])
        if url and not url.startswith(("sqlite:///", "postgresql://", "postgres://")):
            raise ConfigError("DATABASE_URL must start with sqlite:/// or postgresql://")
        redis_url = str(values["redis_url"])
        if redis_url and not redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError("REDIS_URL must start with redis://, rediss:// or unix://")
        return cls(warnings=tuple(warnings), **values)  # type: ignore[arg-type]


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, not {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"{name} must be positive")
    return value
