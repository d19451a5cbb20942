"""Request ids and the one log line per request, shared by the Quart hooks and the hot path.

A client's `X-Request-ID` is kept when it is 1..128 characters of `A-Za-z0-9._:-`; otherwise a new id is
made. The id is echoed in the response header and set in `request_id_var`, so every log line written while
serving the request carries it.
"""

from __future__ import annotations

import logging
import re
import time

from agentgov.ids import random_hex
from agentgov.logs import fields, request_id_var

log = logging.getLogger("agentgov.http")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def start_request(incoming: str | None) -> str:
    """The request id to use (the client's if well-formed, else a new one); also set for log lines."""
    request_id = incoming if incoming and _REQUEST_ID.match(incoming) else random_hex()
    request_id_var.set(request_id)
    return request_id


def log_request(request_id: str, method: str, path: str, status: int, started: float) -> None:
    """Write the request's log line (INFO) with its duration since `started` (`time.perf_counter()`)."""
    if log.isEnabledFor(logging.INFO):
        log.info(
            "request",
            extra=fields(
                request_id=request_id,
                method=method,
                path=path,
                status=status,
                ms=round((time.perf_counter() - started) * 1000, 2),
            ),
        )
