"""Identifiers that must be unique but need not be secret (decision, audit entry and request ids).

They come from the process PRNG (seeded from the OS at import), which saves the system call
`uuid.uuid4()` makes for every id. Never use these for credentials or tokens.
"""

from __future__ import annotations

import random

_prng = random.Random()
_VERSION_4 = (0x4 << 76) | (0x2 << 62)  # version nibble 4, RFC 4122 variant bits 10
_CLEAR = ~((0xF << 76) | (0x3 << 62))


def random_uuid() -> str:
    """A random version-4 UUID in canonical text form (`xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`)."""
    h = f"{(_prng.getrandbits(128) & _CLEAR) | _VERSION_4:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def random_hex(bits: int = 128) -> str:
    """`bits` random bits as lower-case hex, zero-padded."""
    return f"{_prng.getrandbits(bits):0{(bits + 3) // 4}x}"
