"""The LangChain integration against the real service: `AgentgovMiddleware` in `create_agent` agents run with
``invoke`` (blocking `Client`, in a thread) and ``ainvoke`` (`AsyncClient`, in asyncio), and
`AgentgovCallbackHandler` on tool runs. A scripted chat model makes the tool calls."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from agentgov_client import Client
from agentgov_client.integrations import ToolCallDenied
from agentgov_client.integrations.langchain import AgentgovCallbackHandler, AgentgovMiddleware
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from tests.client_integrations.conftest import (
    APPROVAL_WAIT,
    FORBIDDEN,
    Service,
    closed_port_url,
    in_asyncio,
    in_thread,
    with_reviewer,
)
from tests.support.polling import wait_until

MODES = ["sync", "async"]
AGENT = "lc-billing-bot"


class ScriptedModel(GenericFakeChatModel):
    """A chat model answering with the scripted messages, whatever the tools bound."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def scripted(*calls: tuple[str, dict[str, Any], str]) -> ScriptedModel:
    """One turn calling the tools `calls` (name, arguments, call id), then a final answer."""
    turns = [
        AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i} for n, a, i in calls]),
        AIMessage(content="done"),
    ]
    return ScriptedModel(messages=iter(turns))


class Tools:
    """The tools, recording what ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

        @tool
        def transfer(amount: int, to: str) -> str:
            """Transfer an amount of money to someone."""
            self.ran.append(("transfer", {"amount": amount, "to": to}))
            return f"sent {amount} to {to}"

        @tool
        def delete_all(table: str) -> str:
            """Delete every record of a table."""
            self.ran.append(("delete_all", {"table": table}))
            return f"deleted {table}"

        @tool
        def lookup(query: str) -> str:
            """Look something up."""
            self.ran.append(("lookup", {"query": query}))
            return f"found {query}"

        self.all: list[BaseTool] = [transfer, delete_all, lookup]
        self.lookup = lookup
        self.delete_all = delete_all


@pytest.fixture
def tools() -> Tools:
    return Tools()


@pytest.fixture
def middlewares() -> Iterator[list[AgentgovMiddleware]]:
    """Middleware made by a test; their blocking clients are closed afterwards."""
    made: list[AgentgovMiddleware] = []
    yield made
    for middleware in made:
        middleware.close()


def governance(service: Service, made: list[AgentgovMiddleware], **options: Any) -> AgentgovMiddleware:
    options.setdefault("agent_name", AGENT)
    options.setdefault("base_url", service.url)
    options.setdefault("api_key", service.api_key)
    options.setdefault("approval_timeout", APPROVAL_WAIT)
    middleware = AgentgovMiddleware(**options)
    made.append(middleware)
    return middleware


async def run_agent(
    mode: str, middleware: AgentgovMiddleware, tools: Tools, *calls: tuple[str, dict[str, Any], str]
) -> list[ToolMessage]:
    """Run a `create_agent` agent making `calls`; the tool messages the model got back."""
    agent = create_agent(scripted(*calls), tools=tools.all, middleware=[middleware])
    payload = {"messages": [{"role": "user", "content": "go"}]}
    if mode == "sync":
        result = await in_thread(lambda: agent.invoke(payload))
    else:

        async def main() -> dict[str, Any]:
            try:
                return dict(await agent.ainvoke(payload))
            finally:
                await middleware.aclose()

        result = await in_asyncio(main)
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize("mode", MODES)
async def test_allowed_call_runs_and_its_output_is_logged(
    service: Service, tools: Tools, middlewares: list[AgentgovMiddleware], mode: str
) -> None:
    middleware = governance(service, middlewares)
    messages = await run_agent(
        mode, middleware, tools, ("transfer", {"amount": 50, "to": "bob"}, "c1"), ("lookup", {"query": "iban"}, "c2")
    )
    assert [(m.tool_call_id, m.content, m.status) for m in messages] == [
        ("c1", "sent 50 to bob", "success"),
        ("c2", "found iban", "success"),
    ]
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
        "framework": "langchain",
        "tool_call_id": "c1",
    }


@pytest.mark.parametrize("mode", MODES)
async def test_denied_call_does_not_run_and_the_model_gets_the_reason(
    service: Service, tools: Tools, middlewares: list[AgentgovMiddleware], mode: str
) -> None:
    middleware = governance(service, middlewares)
    messages = await run_agent(
        mode,
        middleware,
        tools,
        ("delete_all", {"table": "customers"}, "c1"),
        ("transfer", {"amount": 500, "to": "eve"}, "c2"),  # no policy allows 100 < amount <= 1000
    )
    assert tools.ran == []
    first, second = messages
    assert first.tool_call_id == "c1" and first.name == "delete_all" and first.status == "error"
    assert first.content.startswith("Denied by policy: ") and FORBIDDEN in first.content
    assert second.status == "error" and "tenant default is to deny" in second.content
    assert await service.actions() == []


@pytest.mark.parametrize("mode", MODES)
async def test_on_deny_raise_stops_the_run(
    service: Service, tools: Tools, middlewares: list[AgentgovMiddleware], mode: str
) -> None:
    middleware = governance(service, middlewares, on_deny="raise")
    with pytest.raises(ToolCallDenied) as denied:
        await run_agent(mode, middleware, tools, ("delete_all", {"table": "customers"}, "c1"))
    assert tools.ran == []
    error = denied.value
    assert error.outcome == "denied" and error.tool_name == "delete_all" and error.tool_call_id == "c1"
    assert error.arguments == {"table": "customers"}
    assert error.decision is not None and not error.decision.allowed and error.decision.severity == "critical"
    assert FORBIDDEN in error.reason


@pytest.mark.parametrize("decision", ["approve", "reject", "timeout"])
@pytest.mark.parametrize("mode", MODES)
async def test_approval(
    service: Service, tools: Tools, middlewares: list[AgentgovMiddleware], mode: str, decision: str
) -> None:
    middleware = governance(service, middlewares, approval_timeout=0.5 if decision == "timeout" else APPROVAL_WAIT)
    messages = await with_reviewer(
        service, decision, lambda: run_agent(mode, middleware, tools, ("transfer", {"amount": 5000, "to": "x"}, "c1"))
    )
    [message] = messages
    actions = await service.actions(action="transfer")
    if decision == "approve":
        assert tools.ran == [("transfer", {"amount": 5000, "to": "x"})]
        assert message.content == "sent 5000 to x" and message.status == "success"
        [entry] = actions
        assert entry["output"] == {"result": "sent 5000 to x"} and entry["is_approved"] is True
        return
    assert tools.ran == [] and actions == [] and message.status == "error"
    if decision == "reject":
        assert message.content.startswith("Not approved: a reviewer rejected approval ")
        assert message.content.endswith("(reviewed)")
    else:
        assert message.content.startswith("Not approved: no decision on approval ")
        assert message.content.endswith("within 0.5s")
        [pending] = await service.pending()
        assert pending["action"] == "transfer" and pending["context"]["amount"] == 5000


@pytest.mark.parametrize("mode", MODES)
async def test_service_unreachable_fails_closed_or_open(
    service: Service,
    tools: Tools,
    middlewares: list[AgentgovMiddleware],
    mode: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    down = {"base_url": closed_port_url(), "client_options": {"max_retries": 0}}
    closed = governance(service, middlewares, **down)
    [message] = await run_agent(mode, closed, tools, ("lookup", {"query": "a"}, "c1"))
    assert tools.ran == [] and message.status == "error"
    assert message.content.startswith("Not run: the governance service is unreachable")

    caplog.set_level(logging.WARNING, logger="agentgov_client")
    opened = governance(service, middlewares, fail_mode="open", **down)
    [message] = await run_agent(mode, opened, tools, ("lookup", {"query": "b"}, "c1"))
    assert tools.ran == [("lookup", {"query": "b"})]
    assert message.content == "found b" and message.status == "success"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("fail_mode='open'" in w for w in warnings) and any("not logged" in w for w in warnings)


@pytest.mark.parametrize("mode", MODES)
async def test_agent_is_registered_by_name_once_and_reused(
    service: Service, tools: Tools, middlewares: list[AgentgovMiddleware], mode: str
) -> None:
    first = governance(service, middlewares)
    await run_agent(mode, first, tools, ("lookup", {"query": "a"}, "c1"), ("lookup", {"query": "b"}, "c2"))
    await run_agent(mode, first, tools, ("lookup", {"query": "c"}, "c3"))  # cached
    await run_agent(mode, governance(service, middlewares), tools, ("lookup", {"query": "d"}, "c4"))  # looked up
    [agent] = await service.agents(AGENT)
    assert agent["type"] == "llm"
    assert len(await service.actions(agent_id=agent["id"])) == 4

    typed = governance(service, middlewares, agent_name="lc-etl", agent_type="workflow")
    await run_agent(mode, typed, tools, ("lookup", {"query": "e"}, "c5"))
    [etl] = await service.agents("lc-etl")
    assert etl["type"] == "workflow"

    explicit = await service.register_agent("registered-elsewhere")
    by_id = governance(service, middlewares, agent_name=None, agent_id=explicit)
    await run_agent(mode, by_id, tools, ("lookup", {"query": "f"}, "c6"))
    [entry] = await service.actions(agent_id=explicit)
    assert entry["input"] == {"query": "f"}
    assert len(await service.agents()) == 3


async def test_the_integration_header_is_counted(
    service: Service, tools: Tools, middlewares: list[AgentgovMiddleware]
) -> None:
    # a Client built by the user, without an integration, and only that: ainvoke gets an AsyncClient like it
    with Client(service.url, api_key=service.api_key) as client:
        middleware = governance(service, middlewares, client=client, base_url=None, api_key=None)
        assert client.integration is not None and client.integration.startswith("langchain/")
        await run_agent("sync", middleware, tools, ("lookup", {"query": "a"}, "c1"))
        await run_agent("async", middleware, tools, ("lookup", {"query": "b"}, "c2"))
    assert len(await service.actions()) == 2

    async def counted() -> bool:
        usage = await service.usage("langchain")
        return bool(usage["checks_last_24h"] > 0 and usage["actions_last_24h"] > 0)

    await wait_until(counted, within=10, every=0.2)
    assert (await service.usage("langchain"))["agents"] == 1
    assert (await service.usage("openai-agents"))["checks_last_24h"] == 0


async def test_callback_handler_blocks_denied_tools_and_logs_results(service: Service, tools: Tools) -> None:
    handler = AgentgovCallbackHandler(agent_name="lc-legacy", base_url=service.url, api_key=service.api_key)
    try:
        config: Any = {"callbacks": [handler]}
        assert await in_thread(lambda: tools.lookup.invoke({"query": "iban"}, config=config)) == "found iban"
        with pytest.raises(ToolCallDenied) as denied:
            await in_thread(lambda: tools.delete_all.invoke({"table": "customers"}, config=config))
        assert denied.value.outcome == "denied" and FORBIDDEN in denied.value.reason
        # inside an agent run too: the denial propagates out of the run
        agent = create_agent(scripted(("delete_all", {"table": "orders"}, "c1")), tools=tools.all)
        with pytest.raises(ToolCallDenied):
            await in_thread(lambda: agent.invoke({"messages": [{"role": "user", "content": "go"}]}, config=config))

        async def main() -> Any:
            return await tools.lookup.ainvoke({"query": "bic"}, config=config)

        assert await in_asyncio(main) == "found bic"
    finally:
        handler.close()
    assert tools.ran == [("lookup", {"query": "iban"}), ("lookup", {"query": "bic"})]
    agent_id = await service.agent_id("lc-legacy")
    outputs = [e["output"] for e in await service.actions(agent_id=agent_id)]
    assert outputs == [{"result": "found bic"}, {"result": "found iban"}]
