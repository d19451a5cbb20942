"""LangChain v1: check every tool call of an agent with the service, and log what the tool returned.

`AgentgovMiddleware` is agent middleware for ``langchain.agents.create_agent(..., middleware=[...])``: its
``wrap_tool_call`` (``invoke``/``stream``, with the blocking `Client`) and ``awrap_tool_call``
(``ainvoke``/``astream``, with the `AsyncClient`) check each call before the tool runs. A denied call does
not run: the model receives ``ToolMessage(content=<reason>, status="error")`` (``on_deny="message"``), or
`ToolCallDenied` is raised out of the agent run (``on_deny="raise"``).

`AgentgovCallbackHandler` is for code that runs tools with callbacks instead (``tool.invoke(args,
config={"callbacks": [handler]})``, legacy chains): ``on_tool_start`` checks the call and raises
`ToolCallDenied` to stop a denied tool (a callback cannot replace a tool's result); ``on_tool_end`` and
``on_tool_error`` log the result.

Install with ``pip install "agentgov-client[langchain]"``. Semantics: `agentgov_client.integrations._gate`.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any
from uuid import UUID

try:
    from langchain.agents.middleware import AgentMiddleware, ToolCallRequest
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.messages import ToolMessage
    from langgraph.types import Command
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise ImportError(
        'agentgov_client.integrations.langchain needs LangChain v1: pip install "agentgov-client[langchain]"'
    ) from exc

from agentgov_client.async_client import AsyncClient
from agentgov_client.client import Client
from agentgov_client.integrations._gate import DEFAULT_CONTEXT_FIELDS, ExtraContext, ToolGate
from agentgov_client.integrations._values import parse_arguments, tool_error_output, tool_output
from agentgov_client.integrations._verdict import FailMode, OnDeny, ToolCall, ToolCallDenied, Verdict

__all__ = ["FRAMEWORK", "INTEGRATION", "AgentgovCallbackHandler", "AgentgovMiddleware", "ToolCallDenied"]

INTEGRATION = "langchain"
FRAMEWORK = "langchain"


def _tool_call(name: str, arguments: Any, call_id: str | None) -> ToolCall:
    return ToolCall(name=name, arguments=parse_arguments(arguments), call_id=call_id, framework=FRAMEWORK)


def _result_output(result: Any) -> dict[str, Any]:
    """The audit output of what the tool node returned: a `ToolMessage`'s content (``{"error": ...}`` when
    its status is error), a `Command`'s update, or the value itself."""
    if isinstance(result, ToolMessage):
        if result.status == "error":
            content = result.content if isinstance(result.content, str) else str(result.content)
            return tool_error_output(content)
        return tool_output(result.content)
    if isinstance(result, Command):
        return tool_output({"command": {"update": result.update, "goto": result.goto}})
    return tool_output(result)


def _named_agent(agent_id: str | None, agent_name: str | None) -> None:
    """Raises `ValueError` unless the agent is named (a LangChain agent has no name of its own to fall back on)."""
    if not agent_id and not agent_name:
        raise ValueError("give agent_id or agent_name (the agent is registered under that name on first use)")


class AgentgovMiddleware(AgentMiddleware):
    """Agent middleware that checks every tool call with the service before the tool runs.

    ``AgentgovMiddleware(agent_name="billing-bot", base_url=..., api_key=...)``, then
    ``create_agent(model, tools=[...], middleware=[governance])``.

    The agent: `agent_id`, or `agent_name` (looked up by exact name among the tenant's agents on first use,
    else registered as `agent_type` with `agent_description`; cached). The clients: `client` (a `Client`,
    for ``invoke``) and `async_client` (an `AsyncClient`, for ``ainvoke``), else made from `base_url`,
    `api_key` and `client_options` (keyword arguments of `Client`, e.g. ``{"timeout": 5}``); they send
    ``X-Agentgov-Integration: langchain/<version>``.

    `on_deny`: ``"message"`` (the model gets the reason as an error `ToolMessage`) or ``"raise"``
    (`ToolCallDenied`). `fail_mode`: ``"closed"`` (service unreachable -> denied) or ``"open"`` (the tool runs
    unchecked). `approval_timeout`: seconds to wait for a human decision when a policy asks for one (None:
    until the service expires the request). `context_fields`, `extra_context`: what the policy context holds
    besides the arguments (`ToolGate.build_context`). `deny_message`: a function of the `Verdict` making the
    model's message.

    Close the clients it made with `close` / `aclose` (or ``with`` / ``async with``).
    """

    def __init__(
        self,
        *,
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
        super().__init__()
        _named_agent(agent_id, agent_name)
        self.gate = ToolGate(
            integration=INTEGRATION,
            framework=FRAMEWORK,
            agent_id=agent_id,
            agent_name=agent_name,
            agent_type=agent_type,
            agent_description=agent_description,
            client=client,
            async_client=async_client,
            base_url=base_url,
            api_key=api_key,
            client_options=client_options,
            on_deny=on_deny,
            fail_mode=fail_mode,
            approval_timeout=approval_timeout,
            context_fields=context_fields,
            extra_context=extra_context,
            deny_message=deny_message,
        )

    @property
    def name(self) -> str:
        return "AgentgovMiddleware"

    @staticmethod
    def _call(request: ToolCallRequest) -> ToolCall:
        tool_call = request.tool_call
        return _tool_call(str(tool_call["name"]), tool_call.get("args"), tool_call.get("id"))

    def _refusal(self, verdict: Verdict) -> ToolMessage:
        if self.gate.on_deny == "raise":
            raise ToolCallDenied(verdict)
        return ToolMessage(
            content=verdict.message,
            tool_call_id=verdict.call.call_id or "",
            name=verdict.call.name,
            status="error",
        )

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        verdict = self.gate.decide(self._call(request))
        if not verdict.allowed:
            return self._refusal(verdict)
        try:
            result = handler(request)
        except Exception as exc:
            self.gate.log_result(verdict, tool_error_output(exc))
            raise
        self.gate.log_result(verdict, _result_output(result))
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        verdict = await self.gate.adecide(self._call(request))
        if not verdict.allowed:
            return self._refusal(verdict)
        try:
            result = await handler(request)
        except Exception as exc:
            await self.gate.alog_result(verdict, tool_error_output(exc))
            raise
        await self.gate.alog_result(verdict, _result_output(result))
        return result

    def close(self) -> None:
        """Close the `Client` it made."""
        self.gate.close()

    async def aclose(self) -> None:
        """Close the `AsyncClient` it made for the running event loop."""
        await self.gate.aclose()

    def __enter__(self) -> AgentgovMiddleware:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> AgentgovMiddleware:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class AgentgovCallbackHandler(BaseCallbackHandler):
    """A callback handler that checks each tool run with the service (``on_tool_start``) and logs its result
    (``on_tool_end``, ``on_tool_error``). Pass it as ``config={"callbacks": [handler]}``.

    A denied call raises `ToolCallDenied` from ``on_tool_start`` (`raise_error` is True, so LangChain lets it
    through and the tool does not run); there is no ``on_deny`` choice here, since a callback cannot give the
    model a result instead. The other arguments are those of `AgentgovMiddleware`; it uses the blocking
    `Client` (LangChain runs a synchronous handler in a worker thread during async runs). Do not combine it
    with `AgentgovMiddleware` on the same agent (each call would be checked twice).
    """

    raise_error: bool = True

    def __init__(
        self,
        *,
        agent_id: str | None = None,
        agent_name: str | None = None,
        agent_type: str = "llm",
        agent_description: str = "",
        client: Client | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        client_options: Mapping[str, Any] | None = None,
        fail_mode: FailMode = "closed",
        approval_timeout: float | None = 300.0,
        context_fields: Iterable[str] = DEFAULT_CONTEXT_FIELDS,
        extra_context: ExtraContext | None = None,
        deny_message: Callable[[Verdict], str] | None = None,
    ) -> None:
        super().__init__()
        _named_agent(agent_id, agent_name)
        self.gate = ToolGate(
            integration=INTEGRATION,
            framework=FRAMEWORK,
            agent_id=agent_id,
            agent_name=agent_name,
            agent_type=agent_type,
            agent_description=agent_description,
            client=client,
            base_url=base_url,
            api_key=api_key,
            client_options=client_options,
            on_deny="raise",
            fail_mode=fail_mode,
            approval_timeout=approval_timeout,
            context_fields=context_fields,
            extra_context=extra_context,
            deny_message=deny_message,
        )
        self._running: dict[UUID, Verdict] = {}
        self._lock = threading.Lock()

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = str((serialized or {}).get("name") or kwargs.get("name") or "tool")
        arguments: Any = inputs if inputs is not None else input_str
        verdict = self.gate.decide(_tool_call(name, arguments, kwargs.get("tool_call_id")))
        if not verdict.allowed:
            raise ToolCallDenied(verdict)
        with self._lock:
            self._running[run_id] = verdict

    def _finished(self, run_id: UUID) -> Verdict | None:
        with self._lock:
            return self._running.pop(run_id, None)

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        verdict = self._finished(run_id)
        if verdict is not None:
            self.gate.log_result(verdict, _result_output(output))

    def on_tool_error(
        self, error: BaseException, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        verdict = self._finished(run_id)
        if verdict is not None:
            self.gate.log_result(verdict, tool_error_output(error))

    def close(self) -> None:
        """Close the `Client` it made."""
        self.gate.close()
