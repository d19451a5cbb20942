"""Framework integrations: every tool call an agent makes is checked with the service before it runs, and
what it returned is logged to the audit trail.

* `agentgov_client.integrations.langchain`: LangChain v1 agent middleware (`AgentgovMiddleware`) and a
  callback handler (`AgentgovCallbackHandler`); needs ``pip install "agentgov-client[langchain]"``.
* `agentgov_client.integrations.openai_agents`: a tool input guardrail and run hooks for the OpenAI Agents
  SDK (`AgentgovGovernance`); needs ``pip install "agentgov-client[openai-agents]"``.

Both share the semantics of `agentgov_client.integrations._gate` (documented in ``INTEGRATIONS.md``). This
package imports neither framework.
"""

from agentgov_client.integrations._gate import DEFAULT_CONTEXT_FIELDS, ToolGate
from agentgov_client.integrations._verdict import FailMode, OnDeny, Outcome, ToolCall, ToolCallDenied, Verdict

__all__ = [
    "DEFAULT_CONTEXT_FIELDS",
    "FailMode",
    "OnDeny",
    "Outcome",
    "ToolCall",
    "ToolCallDenied",
    "ToolGate",
    "Verdict",
]
