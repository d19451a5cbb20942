"""The long-lived components a running service shares, built by `run.py` (or a test) and handed to the app.

Only shared infrastructure lives here: settings, storage, the cache, the actor system and the token service.
What an actor owns stays in the actor; what it shares read-only it publishes through the runtime
(`ActorContext.publish` / `ActorSystem.view`)."""

from __future__ import annotations

import dataclasses
import os
import socket
import time
import uuid

import trio

from agentgov.actors.runtime import ActorSystem
from agentgov.config import Settings
from agentgov.detection.guard_memory import GuardMemory
from agentgov.security.tokens import TokenService
from agentgov.siem.outbox import LocalCounts
from agentgov.storage.cache import Cache
from agentgov.storage.database import Database
from agentgov.storage.identity import IdentityRepo


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
    # Names this process (the owner of a training task, a lease) among those sharing the database: host, pid and
    # a random part (a pid is reused after a restart).
    instance_id: str = dataclasses.field(
        default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
    )
    # The prompt guard's per-process counters and recent validations (written in the event loop only).
    guard: GuardMemory = dataclasses.field(default_factory=GuardMemory)
    # SIEM events this process could not hand to its outbox writer (counted in `GET /siem/status`).
    siem: LocalCounts = dataclasses.field(default_factory=LocalCounts)

    def __post_init__(self) -> None:
        self.identity = IdentityRepo(self.db)
        self.tokens = TokenService(self.settings, self.cache)

    @property
    def uptime_seconds(self) -> float:
        return time.monotonic() - self.started_monotonic
