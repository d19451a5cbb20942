"""`ask_actor`: the one way routes ask actors. Domain errors map as declared, a refused message is a 422,
a bug is never reported as the client's mistake, and a stuck actor is a 503 after `ASK_TIMEOUT`."""

from __future__ import annotations

from typing import Any

import pytest
import trio

from agentgov.actors.runtime import Actor, ActorSystem, InvalidMessage
from agentgov.http.actor_calls import ASK_TIMEOUT, ask_actor
from agentgov.http.errors import ApiError, api_error_for


class NotThere(Exception):
    pass


class Answers(Actor[Any]):
    async def handle(self, message: Any) -> Any:
        match message:
            case "missing":
                raise NotThere("no such thing")
            case "invalid":
                raise InvalidMessage("name must be a non-blank string")
            case "bug":
                raise ValueError("int() of a None")  # a bug, not the caller's input
            case "stuck":
                await trio.sleep_forever()
        return f"ok: {message}"


ERRORS = {NotThere: lambda exc: ApiError(404, f"Thing not found: {exc}")}


async def ask(message: str) -> Any:
    """`ask_actor`'s reply, or its exception re-raised outside the actor system's nursery."""
    outcome: list[Any] = []
    async with ActorSystem.open() as system:
        ref = system.get_or_spawn("answers", Answers)
        try:
            outcome.append(await ask_actor(ref, message, what="The answering service", errors=ERRORS))
        except Exception as exc:
            exc.add_note(f"answered at {trio.current_time()}")
            outcome.append(exc)
    if isinstance(outcome[0], Exception):
        raise outcome[0]
    return outcome[0]


async def test_a_reply_is_returned() -> None:
    assert await ask("hello") == "ok: hello"


async def test_a_declared_domain_error_becomes_its_answer() -> None:
    with pytest.raises(ApiError) as caught:
        await ask("missing")
    assert (caught.value.status, caught.value.detail) == (404, "Thing not found: no such thing")


async def test_a_refused_message_is_a_422_through_the_app_mapping() -> None:
    with pytest.raises(InvalidMessage) as caught:
        await ask("invalid")
    answer = api_error_for(caught.value)
    assert answer.status == 422 and "non-blank" in answer.detail


async def test_a_bug_is_a_500_not_the_clients_mistake() -> None:
    with pytest.raises(Exception) as caught:
        await ask("bug")
    assert api_error_for(caught.value).status == 500


async def test_a_stuck_actor_is_a_503_after_the_timeout(autojump_clock: trio.testing.MockClock) -> None:
    started = trio.current_time()
    with pytest.raises(ApiError) as caught:
        await ask("stuck")
    assert caught.value.status == 503 and caught.value.headers == {"Retry-After": "1"}
    assert caught.value.detail == "The answering service did not answer in time"
    answered_at = float(caught.value.__notes__[0].removeprefix("answered at "))
    assert answered_at - started == pytest.approx(ASK_TIMEOUT, abs=0.1)
