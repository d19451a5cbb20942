"""The framework integrations the reference client ships, and the request header that names them.

A client integration sends `X-Agentgov-Integration: <name>/<version>` (e.g. `langchain/0.1.0`) on every call;
the server counts a tenant's policy checks and logged actions per integration from it. A value naming no
known integration is ignored (it is only a usage label, never a credential).
"""

from __future__ import annotations

import contextvars
import dataclasses

HEADER = "X-Agentgov-Integration"


@dataclasses.dataclass(frozen=True)
class Integration:
    name: str  # the path segment and the header's name part
    title: str
    framework: str  # the framework's package on PyPI
    supported_versions: str  # PEP 440 specifier of the framework versions the integration is tested with
    install: str
    module: str


INTEGRATIONS = {
    i.name: i
    for i in (
        Integration(
            name="langchain",
            title="LangChain",
            framework="langchain",
            supported_versions=">=1.0,<2",
            install='pip install "agentgov-client[langchain]"',
            module="agentgov_client.integrations.langchain",
        ),
        Integration(
            name="openai-agents",
            title="OpenAI Agents SDK",
            framework="openai-agents",
            supported_versions=">=0.2,<1",
            install='pip install "agentgov-client[openai-agents]"',
            module="agentgov_client.integrations.openai_agents",
        ),
    )
}

# The integration named by the request being served (set with the request id; None: none or unknown).
integration_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("integration", default=None)


def named_by(header: str | None) -> str | None:
    """The known integration an `X-Agentgov-Integration` value names (`name` or `name/version`), else None."""
    if not header:
        return None
    name = header.split("/", 1)[0].strip().lower()
    return name if name in INTEGRATIONS else None
