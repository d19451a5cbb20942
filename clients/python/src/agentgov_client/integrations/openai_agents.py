"""OpenAI Agents SDK: check every call of a function tool with the service, and log what the tool returned.

`AgentgovGovernance` holds two pieces that work together:

* `AgentgovGovernance.guardrail`, a tool input guardrail (``ToolInputGuardrail``) that checks the call before
  the tool runs (waiting for a human decision when a policy asks for one): allowed -> ``allow()``; denied ->
  ``reject_content(message=<reason>)`` (the model receives the reason as the tool's result), or
  ``raise_exception()`` with ``on_deny="raise"`` (the run stops with the SDK's
  ``ToolInputGuardrailTripwireTriggered``, whose ``output.output_info`` is the `ToolCallDenied`). Attach it
  with `AgentgovGovernance.tool` (a ``function_tool`` replacement), `AgentgovGovernance.govern` (an existing
  ``FunctionTool``), or pass `AgentgovGovernance.tool_input_guardrails` to ``function_tool(...,
  tool_input_guardrails=...)``.
* `AgentgovGovernance.hooks`, run hooks (``Runner.run(..., hooks=governance.hooks)``) whose ``on_tool_end``
  logs the result of each call the guardrail let through, with its arguments (matched by the tool call id
  of the ``ToolContext`` both receive). Without the hooks, calls are checked but their results not logged.

The SDK runs on asyncio, so both use the `AsyncClient` (one per event loop). The agent defaults to the SDK
agent's ``name``. Install with ``pip install "agentgov-client[openai-agents]"``. Semantics:
`agentgov_client.integrations._gate`.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, overload

try:
    from agents import FunctionTool, RunContextWrapper, RunHooks, function_tool
    from agents.tool_guardrails import ToolGuardrailFunctionOutput, ToolInputGuardrail, ToolInputGuardrailData
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise ImportError(
        "agentgov_client.integrations.openai_agents needs the OpenAI Agents SDK: "
        'pip install "agentgov-client[openai-agents]"'
    ) from exc

from agentgov_client.async_client import AsyncClient
from agentgov_client.integrations._gate import DEFAULT_CONTEXT_FIELDS, ExtraContext, ToolGate
from agentgov_client.integrations._values import parse_arguments, tool_output
from agentgov_client.integrations._verdict import FailMode, OnDeny, ToolCall, ToolCallDenied, Verdict

__all__ = ["FRAMEWORK", "INTEGRATION", "AgentgovGovernance", "AgentgovRunHooks", "ToolCallDenied"]

INTEGRATION = "openai-agents"
FRAMEWORK = "openai-agents"
GUARDRAIL_NAME = "agentgov"

_Key = tuple[str, str, str]


class AgentgovGovernance:
    """The guardrail and run hooks governing an agent's function tools (see the module's documentation).

    ``governance = AgentgovGovernance(base_url=..., api_key=...)``; ``@governance.tool`` instead of
    ``@function_tool``; ``await Runner.run(agent, prompt, hooks=governance.hooks)``.

    The agent: `agent_id`, else `agent_name`, else the SDK agent's ``name``: looked up by exact name among the
    tenant's agents on first use, else registered as `agent_type` with `agent_description` (cached per name).
    The client: `async_client`, else one made per event loop from `base_url`, `api_key` and `client_options`
    (keyword arguments of `AsyncClient`), sending ``X-Agentgov-Integration: openai-agents/<version>``.

    `on_deny`: ``"message"`` (the model gets the reason as the tool's result) or ``"raise"`` (the run stops).
    `fail_mode`: ``"closed"`` (service unreachable -> denied) or ``"open"`` (the tool runs unchecked).
    `approval_timeout`: seconds the guardrail waits for a human decision when a policy asks for one (None:
    until the service expires the request). `context_fields`, `extra_context`: what the policy context holds
    besides the arguments (`ToolGate.build_context`). `deny_message`: a function of the `Verdict` making the
    model's message. `max_pending`: allowed calls remembered until their ``on_tool_end`` (the oldest are
    forgotten first, e.g. when runs are cancelled between the guardrail and the tool's end).

    Close the client it made with `aclose` (or ``async with``) in the event loop that used it.
    """

    def __init__(
        self,
        *,
        agent_id: str | None = None,
        agent_name: str | None = None,
        agent_type: str = "llm",
        agent_description: str = "",
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
        max_pending: int = 1024,
    ) -> None:
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        self.gate = ToolGate(
            integration=INTEGRATION,
            framework=FRAMEWORK,
            agent_id=agent_id,
            agent_name=agent_name,
            agent_type=agent_type,
            agent_description=agent_description,
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
        self.max_pending = max_pending
        self.guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(
            guardrail_function=self._guard, name=GUARDRAIL_NAME
        )
        self.hooks = AgentgovRunHooks(self)
        self._pending: collections.OrderedDict[_Key, Verdict] = collections.OrderedDict()
        self._lock = threading.Lock()

    # -- the guardrail ----------------------------------------------------------------------------------------

    @property
    def tool_input_guardrails(self) -> list[ToolInputGuardrail[Any]]:
        """``[guardrail]``, for ``function_tool(..., tool_input_guardrails=governance.tool_input_guardrails)``."""
        return [self.guardrail]

    async def _guard(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        context = data.context
        call = ToolCall(
            name=context.tool_name,
            arguments=parse_arguments(context.tool_arguments),
            call_id=context.tool_call_id,
            framework=FRAMEWORK,
        )
        agent_name = getattr(data.agent, "name", None)
        verdict = await self.gate.adecide(call, agent_name=agent_name if isinstance(agent_name, str) else None)
        if verdict.allowed:
            self._remember(_key(context.tool_call_id, context.tool_name, context.tool_arguments), verdict)
            return ToolGuardrailFunctionOutput.allow(output_info=verdict.summary())
        if self.gate.on_deny == "raise":
            return ToolGuardrailFunctionOutput.raise_exception(output_info=ToolCallDenied(verdict))
        return ToolGuardrailFunctionOutput.reject_content(message=verdict.message, output_info=verdict.summary())

    def govern(self, tool: FunctionTool) -> FunctionTool:
        """Attach the guardrail to `tool` (a ``FunctionTool``; once) and return it."""
        guardrails = list(tool.tool_input_guardrails or [])
        if self.guardrail not in guardrails:
            tool.tool_input_guardrails = [self.guardrail, *guardrails]
        return tool

    @overload
    def tool(self, func: Callable[..., Any], /, **options: Any) -> FunctionTool: ...

    @overload
    def tool(self, func: None = None, /, **options: Any) -> Callable[[Callable[..., Any]], FunctionTool]: ...

    def tool(
        self, func: Callable[..., Any] | None = None, /, **options: Any
    ) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
        """``function_tool`` with the guardrail attached: ``@governance.tool`` or
        ``@governance.tool(name_override=...)`` (`options` are those of ``agents.function_tool``)."""

        def make(f: Callable[..., Any]) -> FunctionTool:
            made = function_tool(f, **options)
            assert isinstance(made, FunctionTool)
            return self.govern(made)

        return make if func is None else make(func)

    # -- correlating the guardrail with on_tool_end -----------------------------------------------------------

    def _remember(self, key: _Key, verdict: Verdict) -> None:
        with self._lock:
            self._pending[key] = verdict
            self._pending.move_to_end(key)
            while len(self._pending) > self.max_pending:
                self._pending.popitem(last=False)

    async def record_result(self, context: RunContextWrapper[Any], result: object) -> None:
        """Log `result` for the call the guardrail allowed (``on_tool_end`` of `hooks` calls this). Calls the
        guardrail did not see (other tools, hosted tools) are not logged."""
        call_id = getattr(context, "tool_call_id", None)
        name = getattr(context, "tool_name", None)
        arguments = getattr(context, "tool_arguments", None)
        if not isinstance(call_id, str) or not isinstance(name, str):
            return
        with self._lock:
            verdict = self._pending.pop(_key(call_id, name, arguments), None)
        if verdict is not None:
            await self.gate.alog_result(verdict, tool_output(result))

    # -- closing ----------------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close the `AsyncClient` it made for the running event loop."""
        await self.gate.aclose()

    async def __aenter__(self) -> AgentgovGovernance:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _key(call_id: str, name: str, arguments: Any) -> _Key:
    return (call_id, name, arguments if isinstance(arguments, str) else "")


class AgentgovRunHooks(RunHooks[Any]):
    """Run hooks logging the result of every call `governance`'s guardrail allowed (``on_tool_end``). To add
    hooks of your own, subclass it and call ``super().on_tool_end(...)``."""

    def __init__(self, governance: AgentgovGovernance) -> None:
        self.governance = governance

    async def on_tool_end(self, context: RunContextWrapper[Any], agent: Any, tool: Any, result: object) -> None:
        await self.governance.record_result(context, result)
