"""What the framework integrations decide about one tool call: the call, the verdict, the denial raised."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentgov_client.errors import (
    ActionDenied,
)
from agentgov_client.models import ApprovalRequest, PolicyDecision

OnDeny = Literal["message", "raise"]
FailMode = Literal["closed", "open"]
Outcome = Literal[
    "allowed", "approved", "unchecked", "denied", "rejected", "expired", "timeout", "unreachable", "error"
]

#: Outcomes that let the tool run.
RUN_OUTCOMES: frozenset[str] = frozenset({"allowed", "approved", "unchecked"})


# -- tool calls and verdicts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a framework: the tool's `name`, its `arguments` (JSON data), the framework's
    `call_id` and the `framework`'s name."""

    name: str
    arguments: dict[str, Any]
    call_id: str | None
    framework: str

    @property
    def action(self) -> str:
        """The checked action: the tool's name."""
        return self.name

    @property
    def resource(self) -> str:
        """The checked resource: ``tool:<name>``."""
        return f"tool:{self.name}"


@dataclass(frozen=True)
class Verdict:
    """Whether a tool call may run (`allowed`), why (`outcome`, `reason`), and what the service said.

    `outcome`: ``allowed`` (the policy allowed it), ``approved`` (a human approved it), ``unchecked`` (the
    service was unreachable and ``fail_mode="open"``), or one of the denials: ``denied`` (the policy),
    ``rejected`` (a reviewer), ``expired`` (the approval request expired), ``timeout`` (no decision within
    ``approval_timeout``), ``unreachable`` (fail-closed) and ``error`` (the service refused the request).
    `message` is the text the model receives instead of the tool's result when the call is denied.
    """

    call: ToolCall
    allowed: bool
    outcome: Outcome
    reason: str
    agent_id: str | None = None
    decision: PolicyDecision | None = None
    approval: ApprovalRequest | None = None
    error: BaseException | None = field(default=None, repr=False, compare=False)
    custom_message: str | None = field(default=None, repr=False)

    @property
    def message(self) -> str:
        if self.custom_message is not None:
            return self.custom_message
        if self.allowed:
            return self.reason
        if self.outcome == "denied":
            return f"Denied by policy: {self.reason}"
        if self.outcome in ("rejected", "expired", "timeout"):
            return f"Not approved: {self.reason}"
        return f"Not run: {self.reason}"

    def summary(self) -> dict[str, Any]:
        """The verdict as JSON data (for logs and guardrail ``output_info``)."""
        return {
            "tool": self.call.name,
            "tool_call_id": self.call.call_id,
            "allowed": self.allowed,
            "outcome": self.outcome,
            "reason": self.reason,
            "agent_id": self.agent_id,
            "decision_id": None if self.decision is None else self.decision.decision_id,
            "approval_id": None if self.approval is None else self.approval.id,
        }


class ToolCallDenied(ActionDenied):
    """A governed tool call was not run (raised with ``on_deny="raise"``, and by the LangChain callback
    handler). `verdict` tells why (`outcome`: denied, rejected, expired, timeout, unreachable or error);
    `reason` is the message the model would have received; `decision` and `approval` are the service's policy
    decision and approval request, when there were any; `tool_name`, `tool_call_id` and `arguments` name the
    call."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message, decision=verdict.decision, approval=verdict.approval)
        self.verdict = verdict
        self.outcome: Outcome = verdict.outcome
        self.tool_name = verdict.call.name
        self.tool_call_id = verdict.call.call_id
        self.arguments = verdict.call.arguments


ToolCallDenied.__module__ = "agentgov_client.integrations"
