"""Python client of the agentgov service: `Client` (blocking) and `AsyncClient` (asyncio and trio).

from agentgov_client import Client

with Client("http://127.0.0.1:8000", api_key="...") as client:
    decision = client.check(agent_id, "read", "db://orders")
"""

from agentgov_client._async import AsyncExportStream
from agentgov_client._exports import ExportInfo
from agentgov_client._ops._common import UNSET
from agentgov_client._sync import ExportStream
from agentgov_client._version import __version__
from agentgov_client.async_client import AsyncClient
from agentgov_client.client import Client
from agentgov_client.errors import (
    ActionDenied,
    AgentgovError,
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    ApprovalTimeout,
    AuthenticationError,
    ConflictError,
    FieldError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServiceUnavailableError,
    ServiceUnreachable,
    UnexpectedResponseError,
    ValidationError,
)
from agentgov_client.events import Event, EventStream
from agentgov_client.models import (
    Agent,
    AgentDetails,
    AnomalyReport,
    ApiKey,
    ApprovalRequest,
    AuditEntry,
    BatchIngestResult,
    ChainVerification,
    CreatedApiKey,
    CreatedTenant,
    DiscoveryCandidate,
    DiscoveryJob,
    ExportFile,
    ExportJob,
    GuardFeedback,
    GuardResult,
    IngestResult,
    LoginResult,
    ModelVersion,
    Page,
    Policy,
    PolicyDecision,
    PolicyTemplate,
    PolicyVersion,
    Readiness,
    Tenant,
    TrainingTask,
    User,
    WebhookReceipt,
)
from agentgov_client.retries import RetryPolicy
from agentgov_client.webhooks import sign_webhook, verify_webhook, webhook_body

__all__ = [
    "UNSET",
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "ActionDenied",
    "Agent",
    "AgentDetails",
    "AgentgovError",
    "AnomalyReport",
    "ApiKey",
    "ApprovalRequest",
    "ApprovalTimeout",
    "AsyncClient",
    "AsyncExportStream",
    "AuditEntry",
    "AuthenticationError",
    "BatchIngestResult",
    "ChainVerification",
    "Client",
    "ConflictError",
    "CreatedApiKey",
    "CreatedTenant",
    "DiscoveryCandidate",
    "DiscoveryJob",
    "Event",
    "EventStream",
    "ExportFile",
    "ExportInfo",
    "ExportJob",
    "ExportStream",
    "FieldError",
    "GuardFeedback",
    "GuardResult",
    "IngestResult",
    "LoginResult",
    "ModelVersion",
    "NotFoundError",
    "Page",
    "PermissionDeniedError",
    "Policy",
    "PolicyDecision",
    "PolicyTemplate",
    "PolicyVersion",
    "RateLimitError",
    "Readiness",
    "RetryPolicy",
    "ServiceUnavailableError",
    "ServiceUnreachable",
    "Tenant",
    "TrainingTask",
    "UnexpectedResponseError",
    "User",
    "ValidationError",
    "WebhookReceipt",
    "__version__",
    "sign_webhook",
    "verify_webhook",
    "webhook_body",
]
