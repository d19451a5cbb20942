"""`AsyncClient`: the async client (asyncio or trio). Every method is an operation of `agentgov_client._ops` run
by `AsyncTransport`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar, overload

from agentgov_client import _async
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
from agentgov_client.events import EventStream

T = TypeVar("T")


class AsyncClient(_async.AsyncTransport):
    """An async client of the agentgov service, for asyncio and trio (through anyio).

    ``AsyncClient(base_url=None, api_key=None, *, access_token=None, admin_key=None, webhook_secret=None,
    timeout=30.0, max_retries=3, retry=None, user_agent=None, integration=None, integration_version=None,
    headers=None, http_client=None)``; unset settings come from ``AGENTGOV_URL``, ``AGENTGOV_API_KEY``,
    ``AGENTGOV_ACCESS_TOKEN``, ``AGENTGOV_ADMIN_KEY`` and ``AGENTGOV_WEBHOOK_SECRET``. Use it as an async
    context manager (``async with AsyncClient() as client:``) or call `aclose`.

    The methods are those of `Client`, as coroutines (``iter_*`` and `paginate` are async iterators,
    `export_audit` an async context manager). Retries wait with ``anyio.sleep``; cancelling a call stops it.
    """

    # system
    platform_info = _async.op(system.platform_info)
    health = _async.op(system.health)
    ready = _async.op(system.ready)
    status = _async.op(system.status)
    stats = _async.op(system.stats)
    siem_status = _async.op(system.siem_status)
    siem_test = _async.op(system.siem_test)
    integration_status = _async.op(system.integration_status)
    # tenants, sessions, users, API keys
    create_tenant = _async.op(identity.create_tenant)
    list_tenants = _async.op(identity.list_tenants)
    iter_tenants = _async.pager(identity.iter_tenants)
    login = _async.op(identity.login)
    sso_providers = _async.op(identity.sso_providers)
    sso_exchange = _async.op(identity.sso_exchange)
    logout = _async.op(identity.logout)
    me = _async.op(identity.me)
    get_my_profile = _async.op(identity.get_my_profile)
    update_my_profile = _async.op(identity.update_my_profile)
    change_password = _async.op(identity.change_password)
    create_user = _async.op(identity.create_user)
    list_users = _async.op(identity.list_users)
    iter_users = _async.pager(identity.iter_users)
    get_user = _async.op(identity.get_user)
    update_user = _async.op(identity.update_user)
    reset_password = _async.op(identity.reset_password)
    set_user_role = _async.op(identity.set_user_role)
    block_user = _async.op(identity.block_user)
    unblock_user = _async.op(identity.unblock_user)
    delete_user = _async.op(identity.delete_user)
    create_api_key = _async.op(identity.create_api_key)
    list_api_keys = _async.op(identity.list_api_keys)
    iter_api_keys = _async.pager(identity.iter_api_keys)
    revoke_api_key = _async.op(identity.revoke_api_key)
    # agents and discovery
    register_agent = _async.op(agents.register_agent)
    get_agent = _async.op(agents.get_agent)
    get_agent_details = _async.op(agents.get_agent_details)
    list_agents = _async.op(agents.list_agents)
    iter_agents = _async.pager(agents.iter_agents)
    search_agents = _async.op(agents.search_agents)
    update_agent = _async.op(agents.update_agent)
    delete_agent = _async.op(agents.delete_agent)
    heartbeat = _async.op(agents.heartbeat)
    ingest_event = _async.op(discovery.ingest_event)
    ingest_events = _async.op(discovery.ingest_events)
    cluster_candidates = _async.op(discovery.cluster_candidates)
    get_discovery_job = _async.op(discovery.get_discovery_job)
    list_candidates = _async.op(discovery.list_candidates)
    iter_candidates = _async.pager(discovery.iter_candidates)
    get_candidate = _async.op(discovery.get_candidate)
    confirm_candidate = _async.op(discovery.confirm_candidate)
    dismiss_candidate = _async.op(discovery.dismiss_candidate)
    # policies
    check = _async.op(policies.check)
    create_policy = _async.op(policies.create_policy)
    get_policy = _async.op(policies.get_policy)
    list_policies = _async.op(policies.list_policies)
    iter_policies = _async.pager(policies.iter_policies)
    update_policy = _async.op(policies.update_policy)
    delete_policy = _async.op(policies.delete_policy)
    list_policy_versions = _async.op(policies.list_policy_versions)
    get_policy_version = _async.op(policies.get_policy_version)
    list_policy_templates = _async.op(policies.list_policy_templates)
    iter_policy_templates = _async.pager(policies.iter_policy_templates)
    get_policy_settings = _async.op(policies.get_policy_settings)
    set_default_decision = _async.op(policies.set_default_decision)
    # audit trail and webhook
    log_action = _async.op(audit.log_action)
    list_audit = _async.op(audit.list_audit)
    iter_audit = _async.pager(audit.iter_audit)
    get_audit_entry = _async.op(audit.get_audit_entry)
    verify_audit = _async.op(audit.verify_audit)
    export_audit = _async.streamer(audit.export_audit)
    export_audit_to_file = _async.downloader(audit.export_audit)
    export_manifest = _async.op(audit.export_manifest)
    export_public_key = _async.op(audit.export_public_key)
    start_export_job = _async.op(audit.start_export_job)
    get_export_job = _async.op(audit.get_export_job)
    download_export = _async.downloader(audit.download_export)
    send_webhook = _async.op(webhooks.send_webhook)
    # approvals
    request_approval = _async.op(approvals.request_approval)
    get_approval = _async.op(approvals.get_approval)
    list_pending_approvals = _async.op(approvals.list_pending_approvals)
    iter_pending_approvals = _async.pager(approvals.iter_pending_approvals)
    approve = _async.op(approvals.approve)
    reject = _async.op(approvals.reject)
    wait_for_decision = _async.op(approvals.wait_for_decision)
    # anomalies
    report_anomaly = _async.op(anomalies.report_anomaly)
    list_anomalies = _async.op(anomalies.list_anomalies)
    iter_anomalies = _async.pager(anomalies.iter_anomalies)
    anomaly_stats = _async.op(anomalies.anomaly_stats)
    anomaly_detector_status = _async.op(anomalies.anomaly_detector_status)
    anomaly_detector_metrics = _async.op(anomalies.anomaly_detector_metrics)
    anomaly_detector_versions = _async.op(anomalies.anomaly_detector_versions)
    train_anomaly_detector = _async.op(anomalies.train_anomaly_detector)
    anomaly_training_status = _async.op(anomalies.anomaly_training_status)
    cancel_anomaly_training = _async.op(anomalies.cancel_anomaly_training)
    rollback_anomaly_detector = _async.op(anomalies.rollback_anomaly_detector)
    set_anomaly_threshold = _async.op(anomalies.set_anomaly_threshold)
    # prompt guard
    validate_prompt = _async.op(guard.validate_prompt)
    guard_feedback = _async.op(guard.guard_feedback)
    guard_health = _async.op(guard.guard_health)
    guard_stats = _async.op(guard.guard_stats)
    guard_status = _async.op(guard.guard_status)
    guard_metrics = _async.op(guard.guard_metrics)
    guard_versions = _async.op(guard.guard_versions)
    train_guard = _async.op(guard.train_guard)
    guard_training_status = _async.op(guard.guard_training_status)
    cancel_guard_training = _async.op(guard.cancel_guard_training)
    rollback_guard = _async.op(guard.rollback_guard)
    get_guard_settings = _async.op(guard.get_guard_settings)
    set_guard_settings = _async.op(guard.set_guard_settings)

    def sso_login_url(self, provider: str, *, redirect: str | None = None, tenant: str | None = None) -> str:
        """The single sign-on URL to open in the user's browser; see `agentgov_client._ops.identity.sso_login_url`."""
        return identity.sso_login_url(self, provider, redirect=redirect, tenant=tenant)

    def events(self, *, access_token: str | None = None, names: Iterable[str] | None = None) -> EventStream:
        """Live events of the user's tenant (``async with client.events() as stream: async for event in
        stream``); see `agentgov_client.events`. Raises `ValueError` without an access token, and the error of
        the refusal (`AuthenticationError`, `PermissionDeniedError`) when the channel refuses it."""
        return EventStream(self, access_token, names)

    @overload
    async def guarded(
        self,
        agent_id: str,
        action: str,
        resource: str,
        context: Mapping[str, Any] | None,
        run: Callable[[], Awaitable[T]],
        *,
        approval_timeout: float | None = ...,
        on_unreachable: OnUnreachable = ...,
    ) -> T: ...

    @overload
    async def guarded(
        self,
        agent_id: str,
        action: str,
        resource: str,
        context: Mapping[str, Any] | None,
        run: Callable[[], T],
        *,
        approval_timeout: float | None = ...,
        on_unreachable: OnUnreachable = ...,
    ) -> T: ...

    async def guarded(
        self,
        agent_id: str,
        action: str,
        resource: str,
        context: Mapping[str, Any] | None,
        run: Callable[[], Any],
        *,
        approval_timeout: float | None = 300.0,
        on_unreachable: OnUnreachable = "fail_closed",
    ) -> Any:
        """Check the action, wait for its approval if the policy asks for one, run ``run()`` (awaiting its
        result when it is awaitable, so `run` may be an async function), log its result to the audit trail
        and return it. Raises `ActionDenied` (denied, not approved, approval timed out) without running it,
        or `ServiceUnreachable` when the service cannot be asked and `on_unreachable` is ``"fail_closed"``.
        Details: `agentgov_client._ops.guarded.guarded`."""
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
        return await self._drive(flow)
