"""Password hashing (argon2id) and the password policy.

Policy: at least 12 characters, at most 256, not only whitespace, and not the account's email. Hashing
costs ~50 ms of CPU by design, so callers run it in a worker thread.
"""

from __future__ import annotations

import argon2
import trio

MIN_LENGTH = 12
MAX_LENGTH = 256
_hasher = argon2.PasswordHasher()  # argon2id with the library's current recommended parameters


class WeakPassword(ValueError):
    """The password does not meet the policy; the message says why."""


def check_policy(password: str, email: str | None = None) -> None:
    """Raise `WeakPassword` if `password` breaks the policy."""
    if len(password) < MIN_LENGTH:
        raise WeakPassword(f"password must be at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise WeakPassword(f"password must be at most {MAX_LENGTH} characters")
    if not password.strip():
        raise WeakPassword("password must not be only whitespace")
    if email and password.strip().lower() == email.strip().lower():
        raise WeakPassword("password must not be the email address")


async def hash_password(password: str) -> str:
    return await trio.to_thread.run_sync(_hasher.hash, password)


async def verify_password(password_hash: str, password: str) -> bool:
    def run() -> bool:
        try:
            return _hasher.verify(password_hash, password)
        except (argon2.exceptions.VerificationError, argon2.exceptions.InvalidHashError):
            return False

    return await trio.to_thread.run_sync(run)


#: A valid hash of a random password: verifying against it keeps timing equal when the account is unknown.
DUMMY_HASH = _hasher.hash("not-a-real-password-" + "x" * 16)
