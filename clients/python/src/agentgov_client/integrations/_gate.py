"""The core of the framework integrations: decide whether one tool call may run, and log what it did.

Each integration turns its framework's tool call into a `ToolCall` and asks a `ToolGate`:

1. The agent's id: the ``agent_id`` given, else the agent named ``agent_name``, looked up by exact name among
   the tenant's agents (``GET /agents``, every page) and registered (``POST /agents/register``, type
   ``agent_type``) when there is none; the id is cached per name.
2. ``check(agent_id, action=<tool name>, resource="tool:<tool name>", context=...)`` (`build_context`).
3. Denied -> a denied `Verdict` (the tool does not run). Allowed with ``required_approval`` -> wait for the
   human decision (`wait_for_decision`, at most ``approval_timeout`` seconds): approved -> allowed; rejected,
   expired or timed out -> denied, the reason saying which.
4. The service cannot be asked (`APIConnectionError`, its `APITimeoutError`, or 503 after the client's
   retries): ``fail_mode="closed"`` -> denied; ``"open"`` -> allowed without a decision (``outcome``
   ``"unchecked"``). Losing the service while waiting for an approval denies in both modes (the policy asked
   for a human). Any other error of the service (401, 403, 422, ...) denies, whatever the mode.
5. After an allowed tool ran: ``log_action(agent_id, <tool name>, "tool:<tool name>", input=<arguments>,
   output={"result": <tool result>}, risk_score=<the decision's>, is_approved=True)`` (``{"error": ...}``
   when the tool failed; ``is_approved`` is left out for an unchecked call). A failure to log is reported as
   a warning on the ``agentgov_client.integrations`` logger and never changes the tool's result: the tool
   already ran.

The flows are written once on the client's own operations (`agentgov_client._ops`), as the client's methods
are, and run by the `Client` (blocking) or the `AsyncClient` (in the event loop) like any method.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
import weakref
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from typing import Any, TypeVar

from agentgov_client._core import ClientCore
from agentgov_client._flow import Flow
from agentgov_client._ops.agents import list_agents, register_agent
from agentgov_client._ops.approvals import request_approval, wait_for_decision
from agentgov_client._ops.audit import log_action
from agentgov_client._ops.policies import check
from agentgov_client._version import __version__
from agentgov_client.async_client import AsyncClient
from agentgov_client.client import Client
from agentgov_client.errors import UNREACHABLE_ERRORS as _UNREACHABLE
from agentgov_client.errors import AgentgovError, ApprovalTimeout, NotFoundError
from agentgov_client.integrations._clients import _AsyncState, _loop_key, _settings_of
from agentgov_client.integrations._values import jsonable
from agentgov_client.integrations._verdict import FailMode, OnDeny, Outcome, ToolCall, Verdict
from agentgov_client.models import Agent, ApprovalRequest, Page, PolicyDecision

log = logging.getLogger("agentgov_client.integrations")

T = TypeVar("T")
_C = TypeVar("_C", Client | None, AsyncClient | None)

#: Tool arguments copied to the top level of the check's context when the tool has them: the client-settable
#: attributes of the service's policy context (Cedar policies read ``context.amount``, ``context.pii`` ...;
#: keys outside this vocabulary, such as ``arguments``, are kept in the decision but no policy can read them).
DEFAULT_CONTEXT_FIELDS: tuple[str, ...] = (
    "amount",
    "currency",
    "consent",
    "pii",
    "record_count",
    "command",
    "query",
    "environment",
    "data_classification",
    "network_zone",
    "labels",
)

ExtraContext = Mapping[str, Any] | Callable[["ToolCall"], Mapping[str, Any]]


class ToolGate:
    """Decides tool calls and logs their results for one integration (see the module's documentation).

    The sync methods use a `Client`, the async ones an `AsyncClient`: the ones given, else clients made on
    first use from `base_url`, `api_key` and `client_options` (other `Client` keyword arguments), sending
    ``X-Agentgov-Integration: <integration>/<client version>``. A client given without an integration is set
    to name this one (its ``integration`` attribute). Made clients are closed by `close` and `aclose`; an
    `AsyncClient` is made per event loop (one loop's connections cannot serve another).
    """

    def __init__(
        self,
        *,
        integration: str,
        framework: str,
        agent_id: str | None = None,
        agent_name: str | None = None,
        agent_type: str = "llm",
        agent_description: str = "",
        client: Client | None = None,
        async_client: AsyncClient | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        client_options: Mapping[str, Any] | None = None,
        on_deny: OnDeny = "message",
        fail_mode: FailMode = "closed",
        approval_timeout: float | None = 300.0,
        context_fields: Iterable[str] = DEFAULT_CONTEXT_FIELDS,
        extra_context: ExtraContext | None = None,
        deny_message: Callable[[Verdict], str] | None = None,
    ) -> None:
        if on_deny not in ("message", "raise"):
            raise ValueError("on_deny must be 'message' or 'raise'")
        if fail_mode not in ("closed", "open"):
            raise ValueError("fail_mode must be 'closed' or 'open'")
        if approval_timeout is not None and approval_timeout < 0:
            raise ValueError("approval_timeout must be None or at least 0 seconds")
        if client is not None and not isinstance(client, Client):
            raise TypeError("client must be an agentgov_client.Client (pass an AsyncClient as async_client)")
        if async_client is not None and not isinstance(async_client, AsyncClient):
            raise TypeError("async_client must be an agentgov_client.AsyncClient")
        self.integration = integration
        self.framework = framework
        self.agent_id = agent_id
        self.agent_name = agent_name
        self.agent_type = agent_type
        self.agent_description = agent_description
        self.on_deny: OnDeny = on_deny
        self.fail_mode: FailMode = fail_mode
        self.approval_timeout = approval_timeout
        self.context_fields = tuple(context_fields)
        self.extra_context = extra_context
        self.deny_message = deny_message
        self._client: Client | None = self._tagged(client)
        self._owns_client = client is None
        self._given_async: AsyncClient | None = self._tagged(async_client)
        args: dict[str, Any] = {"base_url": base_url, "api_key": api_key, **dict(client_options or {})}
        args["integration"] = integration
        # A client made for the other mode copies the settings of the one given.
        self._sync_args = _settings_of(async_client) if async_client is not None and client is None else args
        self._async_args = _settings_of(client) if client is not None and async_client is None else args
        self._async: weakref.WeakKeyDictionary[object, _AsyncState] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._register_lock = threading.Lock()
        self._agent_ids: dict[str, str] = {}

    def _tagged(self, client: _C) -> _C:
        """`client`, sending this integration's header unless it already names an integration."""
        if client is not None and not client.integration:
            # The client's API has no per-request headers: its `integration` attribute is what it sends.
            client.integration = f"{self.integration}/{__version__}"
        return client

    # -- clients ----------------------------------------------------------------------------------------------

    def sync_client(self) -> Client:
        with self._lock:
            if self._client is None:
                self._client = Client(**self._sync_args)
            return self._client

    async def _async_state(self) -> _AsyncState:
        key = _loop_key()
        with self._lock:
            state = self._async.get(key)
            if state is not None:
                return state
            self._drop_closed_loops()
            if self._given_async is not None:
                state = _AsyncState(self._given_async, owned=False)
            else:
                state = _AsyncState(AsyncClient(**self._async_args), owned=True)
            self._async[key] = state
        if state.owned:
            # An async generator the event loop finalizes when it shuts down (``asyncio.run`` does, and trio at
            # the end of a run): it closes the client there, while the loop still runs. Nothing awaits in
            # between, so no other task of this loop sees the state without it.
            state.closer = self._closer(key, state)
            await state.closer.__anext__()
        return state

    async def _closer(self, key: object, state: _AsyncState) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            with self._lock:
                if self._async.get(key) is state:
                    del self._async[key]
            await state.client.aclose()

    def _drop_closed_loops(self) -> None:
        """Forget the clients of event loops closed without finalizing their async generators."""
        for key in [k for k in self._async if isinstance(k, asyncio.AbstractEventLoop) and k.is_closed()]:
            del self._async[key]

    async def async_client(self) -> AsyncClient:
        """The `AsyncClient` of the running event loop."""
        return (await self._async_state()).client

    def close(self) -> None:
        """Close the `Client` this gate made (not one given to it)."""
        with self._lock:
            client, self._client = (self._client, None) if self._owns_client else (None, self._client)
        if client is not None:
            client.close()

    async def aclose(self) -> None:
        """Close the `AsyncClient` this gate made for the running event loop (not one given to it). An event
        loop that finalizes its async generators when it shuts down (``asyncio.run``) closes it anyway."""
        with self._lock:
            state = self._async.pop(_loop_key(), None)
        if state is not None and state.closer is not None:
            await state.closer.aclose()

    # -- the agent --------------------------------------------------------------------------------------------

    def _agent_name(self, fallback: str | None) -> str:
        name = self.agent_name or fallback
        if not name:
            raise ValueError("give agent_id or agent_name: the tool calls must be checked as some agent's")
        return name

    def _find_or_register(self, core: ClientCore, name: str) -> Flow[str]:
        offset: int | None = 0
        while offset is not None:
            page: Page[Agent] = yield from list_agents(core, limit=200, offset=offset)
            for agent in page.items:
                if agent.name == name:
                    return agent.id
            offset = page.next_offset
        agent = yield from register_agent(
            core,
            name,
            self.agent_type,
            description=self.agent_description,
            metadata={"integration": self.integration},
        )
        log.info("registered agent %r (%s) for the %s integration", name, agent.id, self.integration)
        return str(agent.id)

    def resolve_agent(self, fallback_name: str | None = None) -> str:
        """The agent's id (see the module's documentation). Raises the client's errors."""
        if self.agent_id:
            return self.agent_id
        name = self._agent_name(fallback_name)
        found = self._agent_ids.get(name)
        if found is not None:
            return found
        client = self.sync_client()
        with self._register_lock:  # one lookup (and registration) at a time; the others then read the cache
            found = self._agent_ids.get(name)
            if found is None:
                found = client._drive(self._find_or_register(client, name))
                self._agent_ids[name] = found
        return found

    async def aresolve_agent(self, fallback_name: str | None = None) -> str:
        """`resolve_agent`, with the `AsyncClient`."""
        if self.agent_id:
            return self.agent_id
        name = self._agent_name(fallback_name)
        found = self._agent_ids.get(name)
        if found is not None:
            return found
        state = await self._async_state()
        async with state.lock:
            found = self._agent_ids.get(name)
            if found is None:
                found = await state.client._drive(self._find_or_register(state.client, name))
                self._agent_ids[name] = found
        return found

    def _forget_agent(self, fallback_name: str | None) -> bool:
        """Drop a cached agent id the service no longer knows; True when there was one to look up again."""
        if self.agent_id:
            return False
        name = self.agent_name or fallback_name
        return name is not None and self._agent_ids.pop(name, None) is not None

    # -- the decision -----------------------------------------------------------------------------------------

    def build_context(self, call: ToolCall) -> dict[str, Any]:
        """The check's context: the tool arguments named in `context_fields` (those the tool has, not null),
        then `extra_context` (a mapping, or a function of the `ToolCall`; it wins over the arguments, which
        the model chose), then ``arguments`` (all of them), ``framework`` and ``tool_call_id``."""
        context: dict[str, Any] = {
            name: call.arguments[name] for name in self.context_fields if call.arguments.get(name) is not None
        }
        extra = self.extra_context(call) if callable(self.extra_context) else self.extra_context
        if extra:
            context.update(jsonable(extra))
        context.update({"arguments": call.arguments, "framework": call.framework, "tool_call_id": call.call_id})
        return context

    def _unreachable(self, call: ToolCall, agent_id: str | None, exc: BaseException) -> Verdict:
        if self.fail_mode == "open":
            log.warning(
                "agentgov unreachable; running tool %r without a policy decision (fail_mode='open'): %s",
                call.name,
                exc,
            )
            reason = "the governance service is unreachable; run without a policy decision (fail-open)"
            return Verdict(call, True, "unchecked", reason, agent_id=agent_id, error=exc)
        reason = "the governance service is unreachable, so the call could not be checked (fail-closed)"
        return Verdict(call, False, "unreachable", reason, agent_id=agent_id, error=exc)

    def _failed(self, call: ToolCall, agent_id: str | None, what: str, exc: AgentgovError) -> Verdict:
        detail = exc.detail if isinstance(exc.detail, str) else str(exc)
        return Verdict(call, False, "error", f"{what}: {detail}", agent_id=agent_id, error=exc)

    def _decide(self, core: ClientCore, call: ToolCall, agent_id: str) -> Flow[Verdict]:
        context = self.build_context(call)
        try:
            decision: PolicyDecision = yield from check(core, agent_id, call.action, call.resource, context)
        except _UNREACHABLE as exc:
            return self._unreachable(call, agent_id, exc)
        except AgentgovError as exc:
            return self._failed(call, agent_id, "the policy check failed", exc)
        if not decision.allowed:
            reason = decision.reason or "no policy allows this tool call"
            return Verdict(call, False, "denied", reason, agent_id=agent_id, decision=decision)
        if not decision.required_approval:
            return Verdict(call, True, "allowed", decision.reason, agent_id=agent_id, decision=decision)
        return (yield from self._approval(core, call, agent_id, context, decision))

    def _approval(
        self, core: ClientCore, call: ToolCall, agent_id: str, context: dict[str, Any], decision: PolicyDecision
    ) -> Flow[Verdict]:
        approval_id = decision.approval_id
        timeout = self.approval_timeout
        try:
            if approval_id is None:  # the service could not open the request with the check: open it here
                opened: ApprovalRequest = yield from request_approval(
                    core,
                    agent_id,
                    call.action,
                    call.resource,
                    context=context,
                    reason=decision.reason,
                    risk_score=decision.risk_score,
                    policy_ids=decision.determining_policies,
                )
                approval_id = opened.id
            log.info("tool %r waits for approval %s (at most %ss)", call.name, approval_id, timeout)
            approval: ApprovalRequest = yield from wait_for_decision(core, approval_id, timeout=timeout)
        except ApprovalTimeout as exc:
            reason = f"no decision on approval {approval_id} within {timeout:g}s"
            return Verdict(
                call, False, "timeout", reason, agent_id=agent_id, decision=decision, approval=exc.approval, error=exc
            )
        except _UNREACHABLE as exc:
            reason = "the governance service became unreachable while waiting for approval"
            return Verdict(call, False, "unreachable", reason, agent_id=agent_id, decision=decision, error=exc)
        except AgentgovError as exc:
            verdict = self._failed(call, agent_id, "waiting for approval failed", exc)
            return dataclasses.replace(verdict, decision=decision)
        if approval.approved:
            reason = f"approved by a reviewer (approval {approval.id})"
            return Verdict(call, True, "approved", reason, agent_id=agent_id, decision=decision, approval=approval)
        if approval.status == "expired":
            reason = f"approval {approval.id} expired before a reviewer decided"
            outcome: Outcome = "expired"
        else:
            reason = f"a reviewer rejected approval {approval.id}"
            outcome = "rejected"
        if approval.comment:
            reason += f" ({approval.comment})"
        return Verdict(call, False, outcome, reason, agent_id=agent_id, decision=decision, approval=approval)

    def _finish(self, verdict: Verdict) -> Verdict:
        if not verdict.allowed and self.deny_message is not None:
            return dataclasses.replace(verdict, custom_message=self.deny_message(verdict))
        return verdict

    def decide(self, call: ToolCall, *, agent_name: str | None = None) -> Verdict:
        """The verdict on `call` (blocking; with the `Client`). Never raises the client's errors: they are
        verdicts (`unreachable`, `unchecked`, `error`)."""
        for first in (True, False):
            try:
                agent_id = self.resolve_agent(agent_name)
            except _UNREACHABLE as exc:
                return self._finish(self._unreachable(call, None, exc))
            except AgentgovError as exc:
                return self._finish(self._failed(call, None, "the agent could not be registered", exc))
            client = self.sync_client()
            verdict = client._drive(self._decide(client, call, agent_id))
            if first and isinstance(verdict.error, NotFoundError) and self._forget_agent(agent_name):
                continue  # the cached agent was deleted: look it up (or register it) again
            return self._finish(verdict)
        raise AssertionError("unreachable")  # pragma: no cover

    async def adecide(self, call: ToolCall, *, agent_name: str | None = None) -> Verdict:
        """`decide`, with the `AsyncClient` of the running event loop."""
        for first in (True, False):
            try:
                agent_id = await self.aresolve_agent(agent_name)
            except _UNREACHABLE as exc:
                return self._finish(self._unreachable(call, None, exc))
            except AgentgovError as exc:
                return self._finish(self._failed(call, None, "the agent could not be registered", exc))
            async_client = await self.async_client()
            verdict = await async_client._drive(self._decide(async_client, call, agent_id))
            if first and isinstance(verdict.error, NotFoundError) and self._forget_agent(agent_name):
                continue
            return self._finish(verdict)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- the audit log ----------------------------------------------------------------------------------------

    def _log(self, core: ClientCore, verdict: Verdict, output: dict[str, Any]) -> Flow[None]:
        decision = verdict.decision
        assert verdict.agent_id is not None  # `_skip_log` returned False
        yield from log_action(
            core,
            verdict.agent_id,
            verdict.call.action,
            verdict.call.resource,
            input=verdict.call.arguments,
            output=output,
            risk_score=None if decision is None else decision.risk_score,
            is_approved=True if verdict.outcome in ("allowed", "approved") else None,
        )

    def _skip_log(self, verdict: Verdict) -> bool:
        if verdict.agent_id is None:
            log.warning("tool %r ran without an agent id (service unreachable); not logged", verdict.call.name)
            return True
        return False

    def _log_failed(self, verdict: Verdict, exc: Exception) -> None:
        log.warning("could not log tool %r to the audit trail: %s", verdict.call.name, exc)

    def log_result(self, verdict: Verdict, output: dict[str, Any]) -> None:
        """Log a tool's `output` (`tool_output`, `tool_error_output`) for an allowed `verdict` (blocking).
        Never raises: a failure is a warning."""
        if self._skip_log(verdict):
            return
        try:
            client = self.sync_client()
            client._drive(self._log(client, verdict, output))
        except Exception as exc:  # the tool ran: its result must reach the model whatever the log did
            self._log_failed(verdict, exc)

    async def alog_result(self, verdict: Verdict, output: dict[str, Any]) -> None:
        """`log_result`, with the `AsyncClient`."""
        if self._skip_log(verdict):
            return
        try:
            async_client = await self.async_client()
            await async_client._drive(self._log(async_client, verdict, output))
        except Exception as exc:
            self._log_failed(verdict, exc)
