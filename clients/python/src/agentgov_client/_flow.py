"""Requests as data, and operations as generators of steps: the part shared by the sync and async clients.

Every client method is written once, as a *flow*: a generator that yields steps and receives their results.

* `Send(call)`: send the request `call` describes; the driver sends back the `httpx.Response` (its body read,
  unless the call streams and succeeded) or throws the `httpx.TransportError` into the flow.
* `Sleep(seconds)`: wait (``time.sleep`` or ``anyio.sleep``).
* `Invoke(fn)`: call a user function (awaiting its result in the async client); its exception is thrown
  into the flow.

The flow's return value is the method's result; the exception it raises is the method's error. `Client` and
`AsyncClient` only drive flows (`agentgov_client._sync`, `agentgov_client._async`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, Union

import httpx

T = TypeVar("T")

Auth = Literal["default", "admin"]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP request and how to read its answer.

    `path` is relative to ``{base_url}/api/v1`` (to ``{base_url}`` when `root`). `parse` turns a success
    answer into the result. `retry_safe` says whether the request may be sent again after a connection error,
    429 or 503 (None: only GET and HEAD). `auth` ``"admin"`` sends the provisioning key (``X-Admin-Key``)
    instead of the bearer token. `stream` leaves a success answer's body unread. Statuses in `accept` are
    parsed as results instead of raised.
    """

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: Mapping[str, Any] | None = None
    json: Any = None
    content: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    retry_safe: bool | None = None
    auth: Auth = "default"
    root: bool = False
    stream: bool = False
    accept: frozenset[int] = frozenset()

    @property
    def may_retry(self) -> bool:
        if self.retry_safe is not None:
            return self.retry_safe
        return self.method.upper() in ("GET", "HEAD")


@dataclass(frozen=True)
class Send:
    call: Call[Any]


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Invoke:
    fn: Callable[[], Any]


Step = Union[Send, Sleep, Invoke]  # noqa: UP007 - a runtime alias (isinstance checks)
Flow = Generator[Step, Any, T]
