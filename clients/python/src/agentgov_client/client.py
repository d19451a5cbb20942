"""`Client`: the blocking client. Every method is an operation of `agentgov_client._ops` run by `SyncTransport`."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from agentgov_client import _sync
from agentgov_client._ops import (
    agents,
    anomalies,
    approvals,
    audit,
    discovery,
    guard,
    identity,
    policies,
    system,
    webhooks,
)
from agentgov_client._ops import guarded as guarded_ops
from agentgov_client._ops.guarded import OnUnreachable

T = TypeVar("T")


class Client(_sync.SyncTransport):
    """A blocking client of the agentgov service.

    ``Client(base_url=None, api_key=None, *, access_token=None, admin_key=None, webhook_secret=None,
    timeout=30.0, max_retries=3, retry=None, user_agent=None, integration=None, integration_version=None,
    headers=None, http_client=None)``; unset settings come from ``AGENTGOV_URL``, ``AGENTGOV_API_KEY``,
    ``AGENTGOV_ACCESS_TOKEN``, ``AGENTGOV_ADMIN_KEY`` and ``AGENTGOV_WEBHOOK_SECRET``. Use it as a context
    manager (``with Client() as client:``) or call `close`.

    Methods raise the `agentgov_client.errors` class of the service's answer (`NotFoundError`,
    `ValidationError`, ...) or `APIConnectionError`; requests safe to repeat are retried (see
    `agentgov_client.retries`). `AsyncClient` has the same methods, as coroutines.
    """

    # system
    platform_info = _sync.op(system.platform_info)
    health = _sync.op(system.health)
    ready = _sync.op(system.ready)
    status = _sync.op(system.status)
    stats = _sync.op(system.stats)
    siem_status = _sync.op(system.siem_status)
    siem_test = _sync.op(system.siem_test)
    integration_status = _sync.op(system.integration_status)
    # tenants, sessions, users, API keys
    create_tenant = _sync.op(identity.create_tenant)
    list_tenants = _sync.op(identity.list_tenants)
    iter_tenants = _sync.pager(identity.iter_tenants)
    login = _sync.op(identity.login)
    sso_providers = _sync.op(identity.sso_providers)
    sso_exchange = _sync.op(identity.sso_exchange)
    logout = _sync.op(identity.logout)
    me = _sync.op(identity.me)
    get_my_profile = _sync.op(identity.get_my_profile)
    update_my_profile = _sync.op(identity.update_my_profile)
    change_password = _sync.op(identity.change_password)
    create_user = _sync.op(identity.create_user)
    list_users = _sync.op(identity.list_users)
    iter_users = _sync.pager(identity.iter_users)
    get_user = _sync.op(identity.get_user)
    update_user = _sync.op(identity.update_user)
    reset_password = _sync.op(identity.reset_password)
    set_user_role = _sync.op(identity.set_user_role)
    block_user = _sync.op(identity.block_user)
    unblock_user = _sync.op(identity.unblock_user)
    delete_user = _sync.op(identity.delete_user)
    create_api_key = _sync.op(identity.create_api_key)
    list_api_keys = _sync.op(identity.list_api_keys)
    iter_api_keys = _sync.pager(identity.iter_api_keys)
    revoke_api_key = _sync.op(identity.revoke_api_key)
    # agents and discovery
    register_agent = _sync.op(agents.register_agent)
    get_agent = _sync.op(agents.get_agent)
    get_agent_details = _sync.op(agents.get_agent_details)
    list_agents = _sync.op(agents.list_agents)
    iter_agents = _sync.pager(agents.iter_agents)
    search_agents = _sync.op(agents.search_agents)
    update_agent = _sync.op(agents.update_agent)
    delete_agent = _sync.op(agents.delete_agent)
    heartbeat = _sync.op(agents.heartbeat)
    ingest_event = _sync.op(discovery.ingest_event)
    ingest_events = _sync.op(discovery.ingest_events)
    cluster_candidates = _sync.op(discovery.cluster_candidates)
    get_discovery_job = _sync.op(discovery.get_discovery_job)
    list_candidates = _sync.op(discovery.list_candidates)
    iter_candidates = _sync.pager(discovery.iter_candidates)
    get_candidate = _sync.op(discovery.get_candidate)
    confirm_candidate = _sync.op(discovery.confirm_candidate)
    dismiss_candidate = _sync.op(discovery.dismiss_candidate)
    # policies
    check = _sync.op(policies.check)
    create_policy = _sync.op(policies.create_policy)
    get_policy = _sync.op(policies.get_policy)
    list_policies = _sync.op(policies.list_policies)
    iter_policies = _sync.pager(policies.iter_policies)
    update_policy = _sync.op(policies.update_policy)
    delete_policy = _sync.op(policies.delete_policy)
    list_policy_versions = _sync.op(policies.list_policy_versions)
    get_policy_version = _sync.op(policies.get_policy_version)
    list_policy_templates = _sync.op(policies.list_policy_templates)
    iter_policy_templates = _sync.pager(policies.iter_policy_templates)
    get_policy_settings = _sync.op(policies.get_policy_settings)
    set_default_decision = _sync.op(policies.set_default_decision)
    # audit trail and webhook
    log_action = _sync.op(audit.log_action)
    list_audit = _sync.op(audit.list_audit)
    iter_audit = _sync.pager(audit.iter_audit)
    get_audit_entry = _sync.op(audit.get_audit_entry)
    verify_audit = _sync.op(audit.verify_audit)
    export_audit = _sync.streamer(audit.export_audit)
    export_audit_to_file = _sync.downloader(audit.export_audit)
    export_manifest = _sync.op(audit.export_manifest)
    export_public_key = _sync.op(audit.export_public_key)
    start_export_job = _sync.op(audit.start_export_job)
    get_export_job = _sync.op(audit.get_export_job)
    download_export = _sync.downloader(audit.download_export)
    send_webhook = _sync.op(webhooks.send_webhook)
    # approvals
    request_approval = _sync.op(approvals.request_approval)
    get_approval = _sync.op(approvals.get_approval)
    list_pending_approvals = _sync.op(approvals.list_pending_approvals)
    iter_pending_approvals = _sync.pager(approvals.iter_pending_approvals)
    approve = _sync.op(approvals.approve)
    reject = _sync.op(approvals.reject)
    wait_for_decision = _sync.op(approvals.wait_for_decision)
    # anomalies
    report_anomaly = _sync.op(anomalies.report_anomaly)
    list_anomalies = _sync.op(anomalies.list_anomalies)
    iter_anomalies = _sync.pager(anomalies.iter_anomalies)
    anomaly_stats = _sync.op(anomalies.anomaly_stats)
    anomaly_detector_status = _sync.op(anomalies.anomaly_detector_status)
    anomaly_detector_metrics = _sync.op(anomalies.anomaly_detector_metrics)
    anomaly_detector_versions = _sync.op(anomalies.anomaly_detector_versions)
    train_anomaly_detector = _sync.op(anomalies.train_anomaly_detector)
    anomaly_training_status = _sync.op(anomalies.anomaly_training_status)
    cancel_anomaly_training = _sync.op(anomalies.cancel_anomaly_training)
    rollback_anomaly_detector = _sync.op(anomalies.rollback_anomaly_detector)
    set_anomaly_threshold = _sync.op(anomalies.set_anomaly_threshold)
    # prompt guard
    validate_prompt = _sync.op(guard.validate_prompt)
    guard_feedback = _sync.op(guard.guard_feedback)
    guard_health = _sync.op(guard.guard_health)
    guard_stats = _sync.op(guard.guard_stats)
    guard_status = _sync.op(guard.guard_status)
    guard_metrics = _sync.op(guard.guard_metrics)
    guard_versions = _sync.op(guard.guard_versions)
    train_guard = _sync.op(guard.train_guard)
    guard_training_status = _sync.op(guard.guard_training_status)
    cancel_guard_training = _sync.op(guard.cancel_guard_training)
    rollback_guard = _sync.op(guard.rollback_guard)
    get_guard_settings = _sync.op(guard.get_guard_settings)
    set_guard_settings = _sync.op(guard.set_guard_settings)

    def sso_login_url(self, provider: str, *, redirect: str | None = None, tenant: str | None = None) -> str:
        """The single sign-on URL to open in the user's browser; see `agentgov_client._ops.identity.sso_login_url`."""
        return identity.sso_login_url(self, provider, redirect=redirect, tenant=tenant)

    def guarded(
        self,
        agent_id: str,
        action: str,
        resource: str,
        context: Mapping[str, Any] | None,
        run: Callable[[], T],
        *,
        approval_timeout: float | None = 300.0,
        on_unreachable: OnUnreachable = "fail_closed",
    ) -> T:
        """Check the action, wait for its approval if the policy asks for one, run ``run()``, log its result
        to the audit trail and return it. Raises `ActionDenied` (denied, not approved, approval timed out)
        without running it, or `ServiceUnreachable` when the service cannot be asked and `on_unreachable` is
        ``"fail_closed"``. `run` is a plain function here (`TypeError` for an async one: use `AsyncClient`).
        Details: `agentgov_client._ops.guarded.guarded`."""
        if inspect.iscoroutinefunction(run):
            raise TypeError("Client.guarded runs plain functions; use AsyncClient for async ones")
        flow = guarded_ops.guarded(
            self,
            agent_id,
            action,
            resource,
            context,
            run,
            approval_timeout=approval_timeout,
            on_unreachable=on_unreachable,
        )
        result: T = self._drive(flow)
        return result
