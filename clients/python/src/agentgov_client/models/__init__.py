"""Typed results: frozen dataclasses read from the service's JSON (``from_json``), each keeping it in ``raw``."""

from agentgov_client.models._base import Model, Page
from agentgov_client.models.agents import (
    Agent,
    AgentDetails,
    BatchIngestResult,
    DiscoveryCandidate,
    DiscoveryJob,
    IngestResult,
)
from agentgov_client.models.approvals import ApprovalRequest
from agentgov_client.models.audit import AuditEntry, ChainVerification, ExportFile, ExportJob, WebhookReceipt
from agentgov_client.models.detection import AnomalyReport, GuardFeedback, GuardResult, ModelVersion, TrainingTask
from agentgov_client.models.identity import ApiKey, CreatedApiKey, CreatedTenant, LoginResult, Tenant, User
from agentgov_client.models.policies import Policy, PolicyDecision, PolicyTemplate, PolicyVersion
from agentgov_client.models.system import Readiness

__all__ = [
    "Agent",
    "AgentDetails",
    "AnomalyReport",
    "ApiKey",
    "ApprovalRequest",
    "AuditEntry",
    "BatchIngestResult",
    "ChainVerification",
    "CreatedApiKey",
    "CreatedTenant",
    "DiscoveryCandidate",
    "DiscoveryJob",
    "ExportFile",
    "ExportJob",
    "GuardFeedback",
    "GuardResult",
    "IngestResult",
    "LoginResult",
    "Model",
    "ModelVersion",
    "Page",
    "Policy",
    "PolicyDecision",
    "PolicyTemplate",
    "PolicyVersion",
    "Readiness",
    "Tenant",
    "TrainingTask",
    "User",
    "WebhookReceipt",
]
