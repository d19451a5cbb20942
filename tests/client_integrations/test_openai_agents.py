"""The OpenAI Agents SDK integration against the real service: `AgentgovGovernance`'s tool input guardrail and
run hooks on agents run with `Runner.run` (asyncio, in a worker thread). A scripted model makes the tool calls
and records what it was sent back; tracing is off, so nothing leaves the machine."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agentgov_client.integrations import ToolCallDenied
from agentgov_client.integrations.openai_agents import AgentgovGovernance
from agents import Agent, FunctionTool, Runner, ToolInputGuardrailTripwireTriggered, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from tests.client_integrations.conftest import (
    APPROVAL_WAIT,
    FORBIDDEN,
    Service,
    closed_port_url,
    in_asyncio,
    with_reviewer,
)
from tests.support.polling import wait_until

AGENT = "oa-billing-bot"

Call = tuple[str, dict[str, Any], str]


@pytest.fixture(autouse=True)
def no_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    set_tracing_disabled(True)


class ScriptedModel(Model):
    """Answers each turn with the scripted tool calls (name, arguments, call id), then with "done"; keeps the
    input of every turn."""

    def __init__(self, *turns: list[Call]) -> None:
        self.turns: list[list[Call] | str] = [*turns, "done"]
        self.inputs: list[Any] = []

    async def get_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        *,
        previous_response_id: Any,
        conversation_id: Any,
        prompt: Any,
    ) -> ModelResponse:
        self.inputs.append(input)
        turn = self.turns.pop(0)
        output: list[Any]
        if isinstance(turn, str):
            text = ResponseOutputText(type="output_text", text=turn, annotations=[])
            output = [
                ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed", content=[text])
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id=call_id,
                    name=name,
                    arguments=json.dumps(arguments),
                    id=f"fc_{call_id}",
                    status="completed",
                )
                for name, arguments, call_id in turn
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError

    def tool_results(self) -> dict[str, str]:
        """What the model was sent back for each call id."""
        return {
            item["call_id"]: item["output"]
            for turn in self.inputs
            if isinstance(turn, list)
            for item in turn
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        }


class Tools:
    """The function tools (not yet governed), recording what ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

        def transfer(amount: int, to: str) -> str:
            """Transfer an amount of money to someone."""
            self.ran.append(("transfer", {"amount": amount, "to": to}))
            return f"sent {amount} to {to}"

        def delete_all(table: str) -> str:
            """Delete every record of a table."""
            self.ran.append(("delete_all", {"table": table}))
            return f"deleted {table}"

        def lookup(query: str) -> str:
            """Look something up."""
            self.ran.append(("lookup", {"query": query}))
            return f"found {query}"

        self.functions = [transfer, delete_all, lookup]


@pytest.fixture
def tools() -> Tools:
    return Tools()


def options(service: Service, **overrides: Any) -> dict[str, Any]:
    return {"base_url": service.url, "api_key": service.api_key, "approval_timeout": APPROVAL_WAIT, **overrides}


async def run_agent(
    tools: Tools,
    model: ScriptedModel,
    agent_name: str = AGENT,
    *,
    governance: AgentgovGovernance | None = None,
    **opts: Any,
) -> Any:
    """Run an agent whose tools are governed (by `governance`, else one made with `opts`); its final output."""

    async def main() -> Any:
        gov = governance or AgentgovGovernance(**opts)
        try:
            governed = [gov.tool(f) for f in tools.functions]
            agent = Agent(name=agent_name, instructions="Do as asked.", model=model, tools=governed)
            result = await Runner.run(agent, "go", hooks=gov.hooks)
            return result.final_output
        finally:
            if governance is None:  # a governance object given is left open: asyncio.run's end closes its client
                await gov.aclose()

    return await in_asyncio(main)


async def test_allowed_call_runs_and_its_output_is_logged(service: Service, tools: Tools) -> None:
    model = ScriptedModel([("transfer", {"amount": 50, "to": "bob"}, "c1"), ("lookup", {"query": "iban"}, "c2")])
    assert await run_agent(tools, model, **options(service)) == "done"
    assert model.tool_results() == {"c1": "sent 50 to bob", "c2": "found iban"}
    assert sorted(name for name, _ in tools.ran) == ["lookup", "transfer"]
    agent_id = await service.agent_id(AGENT)
    [entry] = await service.actions(agent_id=agent_id, action="transfer")
    assert entry["resource"] == "tool:transfer"
    assert entry["input"] == {"amount": 50, "to": "bob"}
    assert entry["output"] == {"result": "sent 50 to bob"}
    assert entry["is_approved"] is True
    [check] = [e for e in await service.audit(agent_id=agent_id, action="transfer") if e["kind"] == "policy_check"]
    assert check["input"]["context"] == {
        "amount": 50,
        "arguments": {"amount": 50, "to": "bob"},
        "framework": "openai-agents",
        "tool_call_id": "c1",
    }


async def test_denied_call_does_not_run_and_the_model_gets_the_reason(service: Service, tools: Tools) -> None:
    model = ScriptedModel(
        [("delete_all", {"table": "customers"}, "c1"), ("transfer", {"amount": 500, "to": "eve"}, "c2")]
    )
    assert await run_agent(tools, model, **options(service)) == "done"
    assert tools.ran == []
    results = model.tool_results()
    assert results["c1"].startswith("Denied by policy: ") and FORBIDDEN in results["c1"]
    assert "tenant default is to deny" in results["c2"]
    assert await service.actions() == []


async def test_on_deny_raise_stops_the_run(service: Service, tools: Tools) -> None:
    model = ScriptedModel([("delete_all", {"table": "customers"}, "c1")])
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as tripped:
        await run_agent(tools, model, **options(service, on_deny="raise"))
    assert tools.ran == []
    denied = tripped.value.output.output_info
    assert isinstance(denied, ToolCallDenied)
    assert denied.outcome == "denied" and denied.tool_name == "delete_all" and denied.tool_call_id == "c1"
    assert denied.arguments == {"table": "customers"} and FORBIDDEN in denied.reason
    assert denied.decision is not None and denied.decision.severity == "critical"


@pytest.mark.parametrize("decision", ["approve", "reject", "timeout"])
async def test_approval(service: Service, tools: Tools, decision: str) -> None:
    model = ScriptedModel([("transfer", {"amount": 5000, "to": "x"}, "c1")])
    timeout = 0.5 if decision == "timeout" else APPROVAL_WAIT
    await with_reviewer(
        service, decision, lambda: run_agent(tools, model, **options(service, approval_timeout=timeout))
    )
    result = model.tool_results()["c1"]
    actions = await service.actions(action="transfer")
    if decision == "approve":
        assert tools.ran == [("transfer", {"amount": 5000, "to": "x"})] and result == "sent 5000 to x"
        [entry] = actions
        assert entry["input"] == {"amount": 5000, "to": "x"}
        assert entry["output"] == {"result": "sent 5000 to x"} and entry["is_approved"] is True
        return
    assert tools.ran == [] and actions == []
    if decision == "reject":
        assert result.startswith("Not approved: a reviewer rejected approval ") and result.endswith("(reviewed)")
    else:
        assert result.startswith("Not approved: no decision on approval ") and result.endswith("within 0.5s")
        assert len(await service.pending()) == 1


async def test_service_unreachable_fails_closed_or_open(
    service: Service, tools: Tools, caplog: pytest.LogCaptureFixture
) -> None:
    down = options(service, base_url=closed_port_url(), client_options={"max_retries": 0})
    model = ScriptedModel([("lookup", {"query": "a"}, "c1")])
    await run_agent(tools, model, **down)
    assert tools.ran == []
    assert model.tool_results()["c1"].startswith("Not run: the governance service is unreachable")

    caplog.set_level(logging.WARNING, logger="agentgov_client")
    model = ScriptedModel([("lookup", {"query": "b"}, "c1")])
    await run_agent(tools, model, **down, fail_mode="open")
    assert tools.ran == [("lookup", {"query": "b"})] and model.tool_results()["c1"] == "found b"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("fail_mode='open'" in w for w in warnings) and any("not logged" in w for w in warnings)


async def test_agent_is_registered_by_name_once_and_reused(service: Service, tools: Tools) -> None:
    async def run(*calls: Call, governance: AgentgovGovernance | None = None, **opts: Any) -> None:
        await run_agent(tools, ScriptedModel(list(calls)), governance=governance, **options(service, **opts))

    # the SDK agent's name, by default; parallel calls of the first run register it once
    shared = AgentgovGovernance(**options(service))
    await run(
        ("lookup", {"query": "a"}, "c1"),
        ("lookup", {"query": "b"}, "c2"),
        ("lookup", {"query": "c"}, "c3"),
        governance=shared,
    )
    await run(("lookup", {"query": "d"}, "c4"), governance=shared)  # cached, used from another event loop
    assert not shared.gate._async  # the client of each event loop was closed when its asyncio.run ended
    await run(("lookup", {"query": "e"}, "c5"))  # another governance object: looked up by name
    [agent] = await service.agents(AGENT)
    assert agent["type"] == "llm" and agent["metadata"] == {"integration": "openai-agents"}
    assert len(await service.actions(agent_id=agent["id"])) == 5

    await run(("lookup", {"query": "e"}, "c6"), agent_name="oa-etl", agent_type="workflow")
    [etl] = await service.agents("oa-etl")
    assert etl["type"] == "workflow"

    explicit = await service.register_agent("registered-elsewhere")
    await run(("lookup", {"query": "f"}, "c7"), agent_id=explicit)
    [entry] = await service.actions(agent_id=explicit)
    assert entry["input"] == {"query": "f"} and entry["output"] == {"result": "found f"}
    assert len(await service.agents()) == 3


async def test_the_integration_header_is_counted(service: Service, tools: Tools) -> None:
    await run_agent(tools, ScriptedModel([("lookup", {"query": "a"}, "c1")]), **options(service))

    async def counted() -> bool:
        usage = await service.usage("openai-agents")
        return bool(usage["checks_last_24h"] > 0 and usage["actions_last_24h"] > 0)

    await wait_until(counted, within=10, every=0.2)
    assert (await service.usage("openai-agents"))["agents"] == 1
    assert (await service.usage("langchain"))["checks_last_24h"] == 0


async def test_guardrail_attaches_to_existing_tools(service: Service, tools: Tools) -> None:
    governance = AgentgovGovernance(**options(service))
    _transfer, delete_all, lookup = tools.functions
    made = function_tool(lookup)
    assert isinstance(made, FunctionTool)
    assert governance.govern(governance.govern(made)).tool_input_guardrails == [governance.guardrail]
    plain = function_tool(delete_all, tool_input_guardrails=governance.tool_input_guardrails)
    model = ScriptedModel([("lookup", {"query": "a"}, "c1"), ("delete_all", {"table": "t"}, "c2")])

    async def main() -> None:
        try:
            agent = Agent(name=AGENT, instructions="Do as asked.", model=model, tools=[made, plain])
            await Runner.run(agent, "go", hooks=governance.hooks)
        finally:
            await governance.aclose()

    await in_asyncio(main)
    assert tools.ran == [("lookup", {"query": "a"})]
    assert model.tool_results()["c2"].startswith("Denied by policy: ")
    [entry] = await service.actions()
    assert entry["output"] == {"result": "found a"}
