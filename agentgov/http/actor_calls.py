"""How routes ask actors: one call with a timeout and an explicit map from domain errors to answers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

import trio

from agentgov.actors.runtime import ActorRef, Request
from agentgov.http.errors import ApiError

ASK_TIMEOUT = 60.0
"""Seconds a route waits for an actor's reply: a bound against a stuck actor, far above any normal reply."""

ErrorMap = Mapping[type[Exception], Callable[[Any], ApiError]]


R = TypeVar("R")


@overload
async def ask_actor(
    ref: ActorRef[Any], message: Request[R], *, what: str, errors: ErrorMap | None = None, late: str = ""
) -> R: ...


@overload
async def ask_actor(
    ref: ActorRef[Any], message: Any, *, what: str, errors: ErrorMap | None = None, late: str = ""
) -> Any: ...


async def ask_actor(
    ref: ActorRef[Any],
    message: Any,
    *,
    what: str,
    errors: ErrorMap | None = None,
    late: str = "",
) -> Any:
    """Ask `ref` and return its reply (typed by the message's `Request[R]`).

    An exception whose type (or a base of it) is a key of `errors` becomes that entry's `ApiError` (keys are
    tried in order). No reply within `ASK_TIMEOUT` seconds is a 503 "`what` did not answer in time`late`" with
    `Retry-After: 1`. Anything else propagates to the app's error mapping (`agentgov.http.errors`): a
    message the actor refused (`Rejected`) is a 422, a full mailbox or a stopping actor a 503, and any other
    exception a 500 that is logged — so a bug is never reported as the client's mistake. Cancellation:
    the caller stops waiting; the actor still handles the message.
    """
    try:
        with trio.fail_after(ASK_TIMEOUT):
            return await ref.ask(message)
    except trio.TooSlowError:
        raise ApiError(503, f"{what} did not answer in time{late}", headers={"Retry-After": "1"}) from None
    except Exception as exc:
        for kind, answer in (errors or {}).items():
            if isinstance(exc, kind):
                raise answer(exc) from None
        raise
