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

from agentgov.env import ConfigError
from agentgov.env import number as _number
from agentgov.siem.settings import SiemSettings

DEFAULT_WEBHOOK_SECRET = "change-me-webhook-secret"
DEFAULT_JWT_SECRET = "change-me-jwt-secret"
DEFAULT_ADMIN_KEY = "change-me-admin-key"
_DEFAULT_SECRETS = {
    "ADMIN_KEY": DEFAULT_ADMIN_KEY,
    "JWT_SECRET": DEFAULT_JWT_SECRET,
    "WEBHOOK_SECRET": DEFAULT_WEBHOOK_SECRET,
}
MIN_SECRET_LENGTH = 16


@dataclasses.dataclass(frozen=True)
class DetectorSettings:
    """Detector training and scoring settings (see docs/anomaly-detection.md).

    auto_train (`ANOMALY_AUTO_TRAIN`, default on): train a tenant's first model once it has `min_history`
        action entries (`ANOMALY_MIN_HISTORY`, 500) and retrain every `retrain_hours`
        (`ANOMALY_RETRAIN_HOURS`, 24) while new entries arrive.
    window_days (`ANOMALY_TRAINING_WINDOW_DAYS`, 30) and max_rows (`ANOMALY_MAX_TRAINING_ROWS`, 200000): the
        history a training reads (the newest rows of the window).
    target_alert_rate (`ANOMALY_TARGET_ALERT_RATE`, 0.01): share of normal traffic the threshold lets through.
    versions_kept (`DETECTOR_VERSIONS_KEPT`, 20): model versions kept per tenant and detector (and the active).
    training_lease (`TRAINING_LEASE_SECONDS`, 15): a running task whose process has not reported for this
        long is failed (its process died), so another process may train.
    """

    auto_train: bool = True
    min_history: int = 500
    retrain_hours: float = 24.0
    window_days: float = 30.0
    max_rows: int = 200_000
    target_alert_rate: float = 0.01
    versions_kept: int = 20
    training_lease: float = 15.0
    auto_check_seconds: float = 60.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DetectorSettings:
        """Raises `ConfigError` for a value that is not a positive number (or on/off for the flag)."""
        flag = env.get("ANOMALY_AUTO_TRAIN", "on").strip().lower()
        if flag not in ("on", "off", "true", "false", "1", "0", "yes", "no"):
            raise ConfigError(f"ANOMALY_AUTO_TRAIN must be on or off, not {flag!r}")
        rate = _number(env, "ANOMALY_TARGET_ALERT_RATE", 0.01)
        if rate >= 0.5:
            raise ConfigError("ANOMALY_TARGET_ALERT_RATE must be below 0.5")
        return cls(
            auto_train=flag in ("on", "true", "1", "yes"),
            min_history=int(_number(env, "ANOMALY_MIN_HISTORY", 500)),
            retrain_hours=_number(env, "ANOMALY_RETRAIN_HOURS", 24.0),
            window_days=_number(env, "ANOMALY_TRAINING_WINDOW_DAYS", 30.0),
            max_rows=int(_number(env, "ANOMALY_MAX_TRAINING_ROWS", 200_000)),
            target_alert_rate=rate,
            versions_kept=int(_number(env, "DETECTOR_VERSIONS_KEPT", 20)),
            training_lease=_number(env, "TRAINING_LEASE_SECONDS", 15.0),
            auto_check_seconds=_number(env, "ANOMALY_AUTO_TRAIN_CHECK_SECONDS", 60.0),
        )


@dataclasses.dataclass(frozen=True)
class SsoSettings:
    """Single sign-on (OpenID Connect) settings, each read from `SSO_<FIELD>` (see docs/sso.md).

    A provider is enabled when its client id, client secret and issuer (or discovery URL) are all set.
    """

    google_client_id: str = ""
    google_client_secret: str = ""
    google_discovery_url: str = ""
    microsoft_client_id: str = ""
    microsoft_client_secret: str = ""
    microsoft_tenant: str = ""
    microsoft_discovery_url: str = ""
    okta_client_id: str = ""
    okta_client_secret: str = ""
    okta_issuer: str = ""
    okta_discovery_url: str = ""
    oidc_client_id: str = ""
    oidc_client_secret: str = ""
    oidc_issuer: str = ""
    oidc_discovery_url: str = ""
    oidc_name: str = ""
    frontend_url: str = ""
    state_ttl: float = 600.0
    code_ttl: float = 60.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SsoSettings:
        """Raises `ConfigError` for a URL setting that is not http(s) or a TTL that is not a positive number."""
        values: dict[str, object] = {}
        for f in dataclasses.fields(cls):
            name = f"SSO_{f.name.upper()}"
            if f.type == "float":
                values[f.name] = _number(env, name, float(f.default))  # type: ignore[arg-type]
                continue
            value = env.get(name, "").strip()
            if name.endswith(("_URL", "OIDC_ISSUER")) and value and not value.startswith(("https://", "http://")):
                raise ConfigError(f"{name} must be an http:// or https:// URL, not {value!r}")
            values[f.name] = value.rstrip("/") if name.endswith(("_URL", "_ISSUER")) else value
        return cls(**values)  # type: ignore[arg-type]


DECISION_LOG_MODES = ("sync", "async")
"""`sync` (default): a policy check answers once its decision-log entry is committed. `async`: it answers
once the entry is queued for the tenant's audit actor (a crash loses what is queued and not yet committed)."""


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
    audit_secret: str = ""
    # EXPORT_SIGNING_KEY: base64 of a 32-byte Ed25519 private key signing export manifests (required in
    # production; in development derived from the audit secret when unset). See docs/exports.md.
    export_signing_key: str = ""
    # EXPORT_DIR (default DATA_DIR/exports): where export jobs write their files; EXPORT_JOB_TTL_HOURS (24):
    # how long a finished job's file can be downloaded.
    export_dir: Path | None = None
    export_job_ttl_hours: float = 24.0
    log_format: str = "text"
    log_level: str = "INFO"
    graceful_timeout: float = 10.0
    keep_alive_timeout: float = 30.0
    trusted_proxy_hops: int = 0
    mailbox_capacity: int = 1024
    decision_log: str = "sync"
    # GIL_SWITCH_INTERVAL: seconds a thread waiting for the GIL waits before the running one is asked to let
    # go (`sys.setswitchinterval`, set by `python run.py`; Python's default is 0.005). Database work runs in
    # worker threads that release the GIL around each statement and must take it back from a busy event loop;
    # with 5 ms, each take-back could wait that long, and a synchronous decision log's commit tens of ms.
    gil_switch_interval: float = 0.0005
    actor_idle_timeout: float = 300.0
    db_pool_size: int = 8
    access_token_ttl: float = 3600.0
    hitl_timeout: float = 3600.0
    # LEASE_SECONDS: how long a process owns a platform-wide duty (approval expiry, SIEM delivery, a clustering
    # job) without renewing it; another process takes the duty over, or fails the export or clustering job,
    # this long after its owner died (docs/design.md).
    lease_seconds: float = 15.0
    notify_status_interval: float = 30.0
    # NOTIFY_RECHECK_INTERVAL: how often a live WebSocket's token is checked again (logout, a block, a deleted
    # user or a password reset close it within this long, with 4003)
    notify_recheck_interval: float = 5.0
    jwt_previous_secrets: tuple[str, ...] = ()
    superadmin_email: str = ""
    superadmin_password: str = ""
    public_base_url: str = ""
    sso: SsoSettings = dataclasses.field(default_factory=SsoSettings)
    detectors: DetectorSettings = dataclasses.field(default_factory=DetectorSettings)
    siem: SiemSettings = dataclasses.field(default_factory=SiemSettings)
    warnings: tuple[str, ...] = ()

    @property
    def is_production(self) -> bool:
        return self.env == "production"

    @property
    def effective_audit_secret(self) -> str:
        """The server secret audit-chain keys derive from: AUDIT_SECRET, else (development) JWT_SECRET."""
        return self.audit_secret or self.jwt_secret

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
        decision_log = env.get("DECISION_LOG", "sync").strip().lower()
        if decision_log not in DECISION_LOG_MODES:
            raise ConfigError(f"DECISION_LOG must be 'sync' or 'async', not {decision_log!r}")
        previous_secrets = tuple(s for s in env.get("JWT_PREVIOUS_SECRETS", "").split(",") if s)
        for previous in previous_secrets:
            _check_secret("JWT_PREVIOUS_SECRETS", previous, environment, required=True)
        warnings: list[str] = []
        values: dict[str, object] = {
            "env": environment,
            "data_dir": Path(env.get("DATA_DIR", "./data")),
            "export_dir": Path(env["EXPORT_DIR"]) if env.get("EXPORT_DIR") else None,
            "export_job_ttl_hours": _number(env, "EXPORT_JOB_TTL_HOURS", 24.0),
            "database_url": env.get("DATABASE_URL", ""),
            "redis_url": env.get("REDIS_URL", ""),
            "redis_prefix": env.get("REDIS_PREFIX", "agentgov:"),
            "log_format": log_format,
            "log_level": env.get("LOG_LEVEL", "INFO").upper(),
            "graceful_timeout": _number(env, "GRACEFUL_TIMEOUT", 10.0),
            "keep_alive_timeout": _number(env, "KEEP_ALIVE_TIMEOUT", 30.0),
            "trusted_proxy_hops": _hops(env),
            "mailbox_capacity": int(_number(env, "MAILBOX_CAPACITY", 1024)),
            "decision_log": decision_log,
            "gil_switch_interval": _number(env, "GIL_SWITCH_INTERVAL", 0.0005),
            "actor_idle_timeout": _number(env, "ACTOR_IDLE_TIMEOUT", 300.0),
            "db_pool_size": int(_number(env, "DB_POOL_SIZE", 8)),
            "access_token_ttl": _number(env, "ACCESS_TOKEN_TTL", 3600.0),
            "hitl_timeout": _number(env, "HITL_TIMEOUT", 3600.0),
            "lease_seconds": _number(env, "LEASE_SECONDS", 15.0),
            "notify_status_interval": _number(env, "NOTIFY_STATUS_INTERVAL", 30.0),
            "notify_recheck_interval": _number(env, "NOTIFY_RECHECK_INTERVAL", 5.0),
            "jwt_previous_secrets": previous_secrets,
            "superadmin_email": env.get("SUPERADMIN_EMAIL", "").strip(),
            "superadmin_password": env.get("SUPERADMIN_PASSWORD", ""),
            "public_base_url": env.get("PUBLIC_BASE_URL", "").rstrip("/"),
            "sso": SsoSettings.from_env(env),
            "detectors": DetectorSettings.from_env(env),
            "siem": SiemSettings.from_env(env),
        }
        for name, default in _DEFAULT_SECRETS.items():
            value = env.get(name, "")
            if value != default:
                _check_secret(name, value, environment)
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
        values["audit_secret"] = _audit_secret(env, environment)
        values["export_signing_key"] = _export_signing_key(env, environment, warnings)
        values.update({k: v for k, v in overrides.items() if v is not None})
        url = str(values["database_url"])
        if url and not url.startswith(("sqlite:///", "postgresql://", "postgres://")):
            raise ConfigError("DATABASE_URL must start with sqlite:/// or postgresql://")
        redis_url = str(values["redis_url"])
        if redis_url and not redis_url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError("REDIS_URL must start with redis://, rediss:// or unix://")
        return cls(warnings=tuple(warnings), **values)  # type: ignore[arg-type]


def _export_signing_key(env: Mapping[str, str], environment: str, warnings: list[str]) -> str:
    """EXPORT_SIGNING_KEY: base64 of 32 bytes; required in production. Raises `ConfigError`."""
    from agentgov.exports.signing import parse_private_key

    value = env.get("EXPORT_SIGNING_KEY", "").strip()
    if not value:
        if environment == "production":
            raise ConfigError("EXPORT_SIGNING_KEY is missing; set base64 of 32 random bytes in production")
        warnings.append("EXPORT_SIGNING_KEY is not set; export manifests are signed with a development key")
        return ""
    try:
        parse_private_key(value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return value


def _audit_secret(env: Mapping[str, str], environment: str) -> str:
    """AUDIT_SECRET: required in production (audit keys derive from it, so keep it stable)."""
    value = env.get("AUDIT_SECRET", "")
    _check_secret("AUDIT_SECRET", value, environment, required=True)
    return value


def _check_secret(name: str, value: str, environment: str, *, required: bool = False) -> None:
    """Refuse a secret no deployment means to use. Raises `ConfigError` naming the setting.

    In every environment a value made only of whitespace is refused (an empty value means "not set"). In
    production a value must also be at least `MIN_SECRET_LENGTH` characters and must not be one of the
    public development defaults, whichever setting it is given to (a token signed with the public JWT
    default must never verify in production, not even as a previous secret). `required` makes a missing
    value an error in production; the other secrets report a missing value themselves.
    """
    if value and not value.strip():
        raise ConfigError(f"{name} is only whitespace; set a strong random value")
    if environment != "production":
        return
    if not value:
        if required:
            raise ConfigError(f"{name} is missing; set a strong random value in production")
        return
    if value in _DEFAULT_SECRETS.values():
        raise ConfigError(f"{name} is a public development default; set a strong random value in production")
    if len(value.strip()) < MIN_SECRET_LENGTH:
        raise ConfigError(f"{name} is too short: use at least {MIN_SECRET_LENGTH} characters")


def _hops(env: Mapping[str, str]) -> int:
    """TRUSTED_PROXY_HOPS: how many reverse proxies in front append `X-Forwarded-*` (0: none, trust no such
    header). Raises `ConfigError` unless a whole number from 0 to 10."""
    raw = env.get("TRUSTED_PROXY_HOPS", "").strip() or "0"
    if not raw.isdigit() or int(raw) > 10:
        raise ConfigError(f"TRUSTED_PROXY_HOPS must be a whole number from 0 to 10, not {raw!r}")
    return int(raw)
