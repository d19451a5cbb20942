"""Leases on platform-wide duties, kept in the database every process shares (table `leases`, m0015).

A duty that must be done by one process at a time (expiring overdue approvals, delivering to the SIEM) is
owned through a lease: `acquire(name, owner, ttl)` takes it when it is free or expired, renews it when
`owner` already holds it, and returns its **fencing token**; it returns None while another owner's lease is
live. The token grows by one at every change of owner, so a process that lost its lease (it stalled past
`ttl` and another took over) can be told apart from the new owner: every write a duty makes runs
`fence(conn, name, token)` in the same transaction, which locks the lease row and raises `LeaseLost` unless
the token is still the current one. A takeover therefore waits for the old owner's transaction, and the old
owner's later writes are refused.

Why the database rather than PostgreSQL advisory locks or Redis: the lease must fence writes to the database
itself, in the same transaction (an advisory lock is tied to a session, not to the writes, and a Redis lock
cannot take part in a database transaction); SQLite (one process) and PostgreSQL (several) get the same code.
Times are wall-clock UTC: processes on several machines need synchronised clocks (NTP), and the lease time
(`LEASE_SECONDS`, default 15) should be well above their skew.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agentgov.storage.database import Connection, Database
from agentgov.timeutil import now, to_iso


class LeaseLost(Exception):
    """The lease changed owner: the write that checked it must not happen."""


def fence(conn: Connection, name: str, token: int) -> None:
    """Raise `LeaseLost` unless `token` is still the current token of lease `name`. Locks the lease row until
    `conn`'s transaction ends, so no takeover commits in between."""
    if conn.execute("UPDATE leases SET token = token WHERE name = :n AND token = :t", {"n": name, "t": token}) != 1:
        raise LeaseLost(f"the lease {name!r} was taken over (token {token} is no longer current)")


class LeaseRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def acquire(self, name: str, owner: str, ttl: float, *, at: datetime | None = None) -> int | None:
        """The fencing token of lease `name`, now held by `owner` for `ttl` seconds from `at` (default now);
        None while another owner holds it."""
        moment = at or now()
        params = {"n": name, "o": owner, "now": to_iso(moment), "until": to_iso(moment + timedelta(seconds=ttl))}

        def run(conn: Connection) -> int | None:
            inserted = conn.execute(
                "INSERT INTO leases (name, owner, token, expires_at) VALUES (:n, :o, 1, :until)"
                " ON CONFLICT (name) DO NOTHING",
                params,
            )
            if inserted != 1:
                taken = conn.execute(
                    "UPDATE leases SET token = CASE WHEN owner = :o THEN token ELSE token + 1 END, owner = :o,"
                    " expires_at = :until WHERE name = :n AND (owner = :o OR expires_at < :now)",
                    params,
                )
                if taken != 1:
                    return None
            return int(conn.scalar("SELECT token FROM leases WHERE name = :n", params))

        return await self.db.write(run)

    async def release(self, name: str, owner: str) -> None:
        """Give the lease up at once (another process may take it at its next try), if `owner` holds it."""
        await self.db.write(
            lambda conn: conn.execute(
                "UPDATE leases SET expires_at = :past WHERE name = :n AND owner = :o",
                {"n": name, "o": owner, "past": to_iso(datetime(1970, 1, 1, tzinfo=now().tzinfo))},
            )
        )

    async def holder(self, name: str) -> tuple[str, int, str] | None:
        """(owner, token, expires_at) of lease `name`, or None if it was never taken."""
        row = await self.db.read(
            lambda conn: conn.fetchone("SELECT owner, token, expires_at FROM leases WHERE name = :n", {"n": name})
        )
        return None if row is None else (row["owner"], int(row["token"]), row["expires_at"])
