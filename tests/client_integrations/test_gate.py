"""The integrations' shared core without a service: the check's context, JSON-safe arguments and outputs, the
options, the integration header of a client the user built, and importing without the frameworks."""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import agentgov_client
import pytest
from agentgov_client import AsyncClient, Client
from agentgov_client.integrations import DEFAULT_CONTEXT_FIELDS, ToolCall, ToolCallDenied, ToolGate, Verdict
from agentgov_client.integrations._values import MAX_JSON_CHARS, jsonable, parse_arguments, tool_output
from pydantic import BaseModel


def _gate(**options: object) -> ToolGate:
    return ToolGate(integration="langchain", framework="langchain", agent_name="bot", **options)  # type: ignore[arg-type]


def _call(**arguments: object) -> ToolCall:
    return ToolCall(name="transfer", arguments=dict(arguments), call_id="c1", framework="langchain")


def test_context_holds_known_arguments_then_the_application_context_then_the_call() -> None:
    gate = _gate(extra_context={"environment": "production", "framework": "ignored"})
    call = _call(amount=50, environment="staging", currency=None, to="bob")
    assert gate.build_context(call) == {
        "amount": 50,
        "environment": "production",  # the application's value wins over the model's argument
        "arguments": {"amount": 50, "environment": "staging", "currency": None, "to": "bob"},
        "framework": "langchain",
        "tool_call_id": "c1",
    }
    assert call.action == "transfer" and call.resource == "tool:transfer"
    computed = _gate(context_fields=["to"], extra_context=lambda c: {"labels": [c.name]})
    assert computed.build_context(call) == {
        "to": "bob",
        "labels": ["transfer"],
        "arguments": call.arguments,
        "framework": "langchain",
        "tool_call_id": "c1",
    }
    assert "amount" in DEFAULT_CONTEXT_FIELDS and "arguments" not in DEFAULT_CONTEXT_FIELDS


def test_arguments_and_outputs_are_json_data() -> None:
    class Payee(BaseModel):
        name: str

    @dataclasses.dataclass
    class Money:
        cents: int

    assert parse_arguments('{"amount": 5}') == {"amount": 5}
    assert parse_arguments("not json") == {"input": "not json"}
    assert parse_arguments("[1, 2]") == {"input": [1, 2]}
    assert parse_arguments("") == {} and parse_arguments(None) == {}
    value = {"a": (1, 2), 3: {"x"}, "nan": math.nan, "payee": Payee(name="bob"), "money": Money(5), "raw": b"hi"}
    assert jsonable(value) == {
        "a": [1, 2],
        "3": ["x"],
        "nan": "nan",
        "payee": {"name": "bob"},
        "money": {"cents": 5},
        "raw": "hi",
    }
    assert isinstance(jsonable(object()), str)
    deep: list[object] = []
    deep.append(deep)
    assert jsonable(deep)  # a cycle ends as text instead of recursing forever
    big = tool_output("x" * (MAX_JSON_CHARS + 10))
    assert big["truncated"] is True and len(big["result"]) == MAX_JSON_CHARS
    assert tool_output({"rows": 3}) == {"result": {"rows": 3}}


def test_verdict_messages_and_the_denial_error() -> None:
    call = _call(amount=5)
    denied = Verdict(call, False, "denied", "too risky")
    assert denied.message == "Denied by policy: too risky"
    assert Verdict(call, False, "timeout", "no decision").message == "Not approved: no decision"
    assert Verdict(call, False, "unreachable", "down").message == "Not run: down"
    error = ToolCallDenied(denied)
    assert error.reason == "Denied by policy: too risky" and error.outcome == "denied"
    assert error.tool_name == "transfer" and error.tool_call_id == "c1" and error.arguments == {"amount": 5}
    assert error.verdict.summary()["outcome"] == "denied"


def test_options_are_checked() -> None:
    with pytest.raises(ValueError, match="on_deny"):
        _gate(on_deny="ignore")
    with pytest.raises(ValueError, match="fail_mode"):
        _gate(fail_mode="maybe")
    with pytest.raises(ValueError, match="approval_timeout"):
        _gate(approval_timeout=-1)
    with pytest.raises(TypeError, match="async_client"):
        _gate(client=AsyncClient("http://127.0.0.1:1"))
    gate = ToolGate(integration="langchain", framework="langchain")
    with pytest.raises(ValueError, match="agent_name"):
        gate.resolve_agent()


def test_a_client_built_by_the_user_names_the_integration_unless_it_names_one() -> None:
    with Client("http://127.0.0.1:1") as plain, Client("http://127.0.0.1:1", integration="mine") as named:
        _gate(client=plain)
        _gate(client=named)
        assert plain.integration is not None and plain.integration.startswith("langchain/")
        assert named.integration is not None and named.integration.startswith("mine/")


def test_importing_without_the_frameworks() -> None:
    script = textwrap.dedent(
        """
        import importlib, sys

        FRAMEWORKS = {"langchain", "langchain_core", "langgraph", "agents"}

        class Missing:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in FRAMEWORKS:
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, Missing())
        import agentgov_client, agentgov_client.integrations
        assert not [m for m in sys.modules if m.split(".")[0] in FRAMEWORKS]
        for module in ("langchain", "openai_agents"):
            try:
                importlib.import_module(f"agentgov_client.integrations.{module}")
            except ImportError as exc:
                print(exc)
        """
    )
    # the client as this test session imports it (installed, or from clients/python/src on pytest's path)
    source = str(Path(agentgov_client.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        'agentgov_client.integrations.langchain needs LangChain v1: pip install "agentgov-client[langchain]"',
        "agentgov_client.integrations.openai_agents needs the OpenAI Agents SDK: "
        'pip install "agentgov-client[openai-agents]"',
    ]
