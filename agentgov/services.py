"""The long-lived components a running service shares, built by `run.py` (or a test) and handed to the app."""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING

import trio

from agentgov.actors.runtime import ActorSystem
from agentgov.config import Settings
from agentgov.security.tokens import TokenService
from agentgov.storage.cache import Cache
from agentgov.storage.database import Database
from agentgov.storage.identity import IdentityRepo

if TYPE_CHECKING:
    from agentgov.actors.policy import PolicyView
    from agentgov.actors.registry import RecentAgents


@dataclasses.dataclass
class Services:
    settings: Settings
    db: Database
    cache: Cache
    actors: ActorSystem
    identity: IdentityRepo = dataclasses.field(init=False)
    tokens: TokenService = dataclasses.field(init=False)
    started_at: float = dataclasses.field(default_factory=time.time)
    started_monotonic: float = dataclasses.field(default_factory=time.monotonic)
    shutting_down: trio.Event = dataclasses.field(default_factory=trio.Event)
    extras: dict[str, object] = dataclasses.field(default_factory=dict)
    # Views actors publish for reads without a message hop (per tenant; each written only by its actor).
    policy_views: dict[str, PolicyView] = dataclasses.field(default_factory=dict)
    recent_agents: dict[str, RecentAgents] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.identity = IdentityRepo(self.db)
        self.tokens = TokenService(self.settings, self.cache)

    @property
    def uptime_seconds(self) -> float:
        return time.monotonic() - self.started_monotonic
