"""Configuration and request building shared by `Client` and `AsyncClient`.

Settings come from the constructor's arguments, else from the environment:

=========================  ==========================  ===================================================
argument                   environment variable        meaning
=========================  ==========================  ===================================================
``base_url``               ``AGENTGOV_URL``            the service's root URL (default
                                                       ``http://127.0.0.1:8000``); a trailing ``/api/v1``
                                                       is accepted and ignored
``api_key``                ``AGENTGOV_API_KEY``        sent as ``X-API-Key`` on every request
``access_token``           ``AGENTGOV_ACCESS_TOKEN``   sent as ``Authorization: Bearer ...``
``admin_key``              ``AGENTGOV_ADMIN_KEY``      sent as ``X-Admin-Key``, only to the provisioning
                                                       routes (tenant creation, SIEM)
``webhook_secret``         ``AGENTGOV_WEBHOOK_SECRET`` signs `send_webhook` deliveries
=========================  ==========================  ===================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum
from typing import Any

from agentgov_client._flow import Call, Flow, T
from agentgov_client._version import __version__
from agentgov_client.retries import RetryPolicy, execute

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
DEFAULT_TIMEOUT = 30.0
API_PREFIX = "/api/v1"
INTEGRATION_HEADER = "X-Agentgov-Integration"
USER_AGENT = f"agentgov-client/{__version__}"


def _setting(value: str | None, variable: str) -> str | None:
    if value is not None:
        return value
    found = os.environ.get(variable, "").strip()
    return found or None


def _root_url(base_url: str) -> str:
    url = base_url.strip().rstrip("/")
    if url.endswith(API_PREFIX):
        url = url[: -len(API_PREFIX)]
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http:// or https:// URL, not {base_url!r}")
    return url


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    return value


class ClientCore:
    """What both clients hold: where the service is, the credentials, headers, timeout and retry policy.

    `timeout` is seconds per request (connect, read, write and pool each); `max_retries` the retries of a
    request safe to repeat (see `agentgov_client.retries`), or pass a whole `retry` policy. `integration`
    (e.g. ``"langchain"``) is sent as ``X-Agentgov-Integration: <name>/<version>`` on every request, with
    `integration_version` (default: this client's version). `headers` are added to every request.
    `http_client` is an ``httpx.Client`` (``httpx.AsyncClient`` for the async client) to send through (e.g.
    with proxies or TLS settings); the client does not close it. Without it the client makes and closes its
    own connection pool.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        access_token: str | None = None,
        admin_key: str | None = None,
        webhook_secret: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        user_agent: str | None = None,
        integration: str | None = None,
        integration_version: str | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: Any = None,
    ) -> None:
        self.base_url = _root_url(_setting(base_url, "AGENTGOV_URL") or DEFAULT_BASE_URL)
        self.api_key = _setting(api_key, "AGENTGOV_API_KEY")
        self.access_token = _setting(access_token, "AGENTGOV_ACCESS_TOKEN")
        self.admin_key = _setting(admin_key, "AGENTGOV_ADMIN_KEY")
        self.webhook_secret = _setting(webhook_secret, "AGENTGOV_WEBHOOK_SECRET")
        self.timeout = timeout
        self.retry = retry if retry is not None else RetryPolicy(max_retries=max_retries)
        self.user_agent = user_agent or USER_AGENT
        self.integration: str | None = None
        if integration:
            name = integration.strip()
            self.integration = name if "/" in name else f"{name}/{integration_version or __version__}"
        self._extra_headers = dict(headers or {})
        self._owns_http = http_client is None
        self._http = self._make_http(http_client)
        self._session_token: str | None = None
        self._session_key: str | None = None

    def _make_http(self, given: Any) -> Any:
        """The transport's HTTP client: `given`, else a new one (implemented by each transport)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    # -- credentials ------------------------------------------------------------------------------------

    def use_session(self, access_token: str, api_key: str | None) -> None:
        """Act as a logged-in user from now on: send `access_token` as bearer and `api_key` as ``X-API-Key``."""
        self.access_token, self._session_token = access_token, access_token
        if api_key is not None:
            self.api_key, self._session_key = api_key, api_key

    def forget_session(self) -> None:
        """Stop sending the credentials `use_session` set (those given to the constructor are not touched)."""
        if self._session_token is not None and self.access_token == self._session_token:
            self.access_token = None
        if self._session_key is not None and self.api_key == self._session_key:
            self.api_key = None
        self._session_token = self._session_key = None

    # -- requests ---------------------------------------------------------------------------------------

    def url_for(self, call: Call[Any]) -> str:
        return f"{self.base_url}{'' if call.root else API_PREFIX}{call.path}"

    def headers_for(self, call: Call[Any]) -> dict[str, str]:
        headers = {"User-Agent": self.user_agent, "Accept": "application/json", **self._extra_headers}
        if self.integration:
            headers[INTEGRATION_HEADER] = self.integration
        if self.api_key:
            headers["X-API-Key"] = self.api_key
        if call.auth == "admin" and self.admin_key:
            headers["X-Admin-Key"] = self.admin_key
        elif self.access_token:
            headers["Authorization"] = f"Bearer {self.access_token}"
        headers.update(call.headers)
        return headers

    def request_args(self, call: Call[Any]) -> dict[str, Any]:
        """Keyword arguments of ``httpx.Client.build_request`` (and the async one) for `call`."""
        args: dict[str, Any] = {
            "method": call.method,
            "url": self.url_for(call),
            "headers": self.headers_for(call),
            "timeout": self.timeout,
        }
        if call.params:
            args["params"] = {k: _query_value(v) for k, v in call.params.items() if v is not None}
        if call.content is not None:
            args["content"] = call.content
        elif call.json is not None:
            args["json"] = call.json
        return args

    def execute(self, call: Call[T]) -> Flow[T]:
        """The flow sending `call` with this client's retry policy (`agentgov_client.retries.execute`)."""
        return execute(call, self.retry)
