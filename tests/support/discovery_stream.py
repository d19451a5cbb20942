"""Labelled synthetic streams of unknown-agent events, for the discovery tests (and the figures in
`agentgov.ml.discovery`'s docstring)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from agentgov.ml.discovery.events import (
    UnknownAgentEvent,
)

# ----------------------------------------------------------------------------------- synthetic stream


@dataclass(frozen=True, slots=True)
class SyntheticStream:
    """Output of :func:`synthetic_event_stream`: shuffled events and their true agent indices."""

    events: list[UnknownAgentEvent]
    #: ground-truth agent index of each event
    labels: list[int]


_HOSTS: Final = (
    "build-07.corp.example.com",
    "ws-jdoe-mbp",
    "ml-gpu-03.lab.example.com",
    "etl-worker-2",
    "fin-laptop-114",
    "k8s-node-a17.prod.example.com",
    "dev-box-ana",
    "jenkins-agent-5",
    "mkt-imac-22",
    "sec-analyst-vm3",
    "data-sci-09.corp.example.com",
    "win-srv-crm01",
    "support-pc-31",
    "research-ws-12",
    "ops-bastion-1",
    "hr-laptop-08",
    "qa-runner-4.ci.example.com",
    "edge-gw-plant3",
    "sales-mbp-77",
    "intern-desktop-2",
    "batch-host-11",
    "legal-vdi-6",
)
_PROCESSES: Final = (
    "/usr/bin/python3.11 /opt/bots/summarizer.py --once",
    "node dist/server.js",
    "java -jar ticket-agent-1.4.2.jar",
    "python3 -m research_agent.main",
    "Cursor Helper (Renderer)",
    "powershell.exe -File C:\\jobs\\sync.ps1",
    "/usr/local/bin/n8n start",
    "python /home/ana/notebooks/scrape_and_ask.py",
    "ollama serve",
    "C:\\Program Files\\Tool\\copilot-cli.exe chat",
    "bun run agent.ts",
    "uvicorn app:api --port 8080",
    "ruby slack_bot.rb",
    "python3.12 /srv/etl/enrich_leads.py",
    "go-agent --config /etc/agent.yaml",
    "/opt/langgraph/bin/python -m graph_worker",
    "Code Helper (Plugin)",
    "bash /opt/cron/nightly_report.sh",
    "deno run --allow-net triage.ts",
    "python3 /srv/rag/ingest.py --full",
    "dotnet Assistant.dll",
    "php artisan agent:run",
)
_USER_AGENTS: Final = (
    "python-requests/2.31.0",
    "OpenAI/Python 1.30.1",
    "axios/1.6.8",
    "node-fetch/3.3.2",
    "curl/8.4.0",
    "anthropic-typescript/0.20.1",
    "langchain/0.1.16 python-httpx/0.27.0",
    "okhttp/4.12.0",
    "aiohttp/3.9.3 Python/3.11",
    "Go-http-client/2.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0.6367.91 Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Cursor/0.38.1 "
    "Chrome/120.0.6099.291 Electron/28.2.1 Safari/537.36",
    "openai-node/4.38.5",
    "google-genai-sdk/0.3.0 gl-python/3.11.6",
    "Boto3/1.34.90 md/Botocore#1.34.90 ua/2.0 os/linux",
    "PostmanRuntime/7.37.3",
    "ollama-python/0.1.8",
    "Apache-HttpClient/4.5.14 (Java/17.0.10)",
    "n8n/1.41.0",
    "Ruby",
    "MistralClient/0.1.8",
)
_APIS: Final[tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]] = (
    (
        "https://api.openai.com",
        (
            "/v1/chat/completions",
            "/v1/embeddings",
            "/v1/responses",
            "/v1/files/file-{id}",
            "/v1/threads/thread_{id}/messages",
        ),
        ("gpt-4o", "gpt-4o-mini", "text-embedding-3-small"),
    ),
    (
        "https://api.anthropic.com",
        ("/v1/messages", "/v1/messages/count_tokens", "/v1/messages/batches/msgbatch_{id}"),
        ("claude-3-5-sonnet-20240620", "claude-3-haiku-20240307"),
    ),
    (
        "https://contoso-eastus.openai.azure.com",
        ("/openai/deployments/gpt4o-prod/chat/completions", "/openai/deployments/embed-small/embeddings"),
        ("gpt-4o", "text-embedding-3-small"),
    ),
    (
        "https://bedrock-runtime.us-east-1.amazonaws.com",
        ("/model/anthropic.claude-3-sonnet/invoke", "/model/anthropic.claude-3-sonnet/converse"),
        ("anthropic.claude-3-sonnet",),
    ),
    (
        "https://generativelanguage.googleapis.com",
        (
            "/v1beta/models/gemini-1.5-pro:generateContent",
            "/v1beta/models/gemini-1.5-flash:streamGenerateContent",
        ),
        ("gemini-1.5-pro", "gemini-1.5-flash"),
    ),
    (
        "https://api.mistral.ai",
        ("/v1/chat/completions", "/v1/embeddings"),
        ("mistral-large-latest", "mistral-embed"),
    ),
    (
        "https://api.cohere.com",
        ("/v1/chat", "/v1/rerank", "/v1/embed"),
        ("command-r-plus", "rerank-english-v3.0"),
    ),
    (
        "https://api-inference.huggingface.co",
        ("/models/meta-llama/Meta-Llama-3-8B-Instruct",),
        ("llama-3-8b-instruct",),
    ),
    (
        "http://10.20.0.15:11434",
        ("/api/generate", "/api/chat", "/api/embeddings"),
        ("llama3", "nomic-embed-text"),
    ),
    ("https://api.groq.com", ("/openai/v1/chat/completions",), ("llama3-70b-8192", "mixtral-8x7b-32768")),
)
_SUBNETS: Final = ("10.0.3", "10.0.4", "10.1.12", "10.1.13", "172.16.8", "192.168.50", "10.8.1", "10.8.2")
_SOURCES: Final = ("proxy", "gateway", "edr")
_USERS: Final = (
    "jdoe",
    "ana",
    "svc-etl",
    "svc-bots",
    "mkt-ops",
    "build",
    "s.kim",
    "r.patel",
    "svc-crm",
    "qa-bot",
)


def _bump_version(ua: str, rng: random.Random) -> str:
    """Change minor/patch numbers (never the major) of every ``product/x.y.z`` in a user agent."""

    def repl(m: re.Match[str]) -> str:
        nums = m.group(2).split(".")
        for i in range(1, len(nums)):
            nums[i] = str(max(0, int(nums[i]) + rng.randint(-2, 3)))
        return f"{m.group(1)}/{'.'.join(nums)}"

    return re.sub(r"([A-Za-z][\w.\-]*)/(\d+(?:\.\d+)+)", repl, ua)


def _random_id(rng: random.Random, n: int = 12) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(alphabet) for _ in range(n - 2)) + str(rng.randint(10, 99))


def synthetic_event_stream(
    n_agents: int = 20,
    *,
    seed: int = 0,
    noise: float = 0.3,
    min_events: int = 5,
    max_events: int = 50,
) -> SyntheticStream:
    """Deterministic labelled stream of unknown-agent events from ``n_agents`` distinct shadow agents.

    Each agent has a host, process, user agent, API provider (with several paths and models), client IP,
    optional service user, and is seen by one to three sensors. Agents are distinct but realistically
    overlapping: they draw user agents, APIs and subnets from small pools, and with ``n_agents >= 4`` one
    pair shares a machine (host name and addresses; different process, user agent and API) and another
    pair runs the same process on different machines.

    Noise always present: a fresh pid in a varying format, a random client port on about half of the
    addresses, a different path / model of the agent's API, id segments and query strings, shuffled order.
    Noise scaled by ``noise`` in [0, 1]: user-agent minor/patch bumps, host FQDN/short-name and case
    changes, the client using one of two other DHCP leases in its /24, endpoint spelling (scheme,
    explicit port, case), dated model names, and each remaining field dropped with probability
    ``0.5 * noise`` (keeping at least two). Sensor visibility is structural: EDR events carry
    host/process/IP/endpoint host but no user agent or model; proxy events have no process (and half the
    time no host); gateway events have no host or process.
    """
    if not 0.0 <= noise <= 1.0:
        raise ValueError("noise must be within [0, 1]")
    if n_agents > len(_HOSTS):
        raise ValueError(f"at most {len(_HOSTS)} agents")
    rng = random.Random(seed)
    hosts = rng.sample(list(_HOSTS), n_agents)
    used_ips: set[str] = set()
    processes = rng.sample(list(_PROCESSES), n_agents)
    profiles: list[dict[str, Any]] = []
    for i in range(n_agents):
        api = rng.choice(_APIS)
        subnet = rng.choice(_SUBNETS)
        free = [o for o in range(10, 251) if f"{subnet}.{o}" not in used_ips]
        ips = [f"{subnet}.{octet}" for octet in rng.sample(free, 3)]
        used_ips.update(ips)
        profiles.append(
            {
                "host": hosts[i],
                "process": processes[i],
                "ua": rng.choice(_USER_AGENTS),
                "api": api,
                "models": rng.sample(list(api[2]), rng.randint(1, len(api[2]))),
                "ips": ips,
                "user": rng.choice(_USERS) if rng.random() < 0.4 else None,
                "sources": rng.sample(list(_SOURCES), rng.randint(1, 3)),
            }
        )
    if n_agents >= 4:
        # two agents on one machine: same host name and IP, otherwise different
        profiles[1]["host"], profiles[1]["ips"] = profiles[0]["host"], profiles[0]["ips"]
        # same script name on two different machines (a popular open-source agent) with different setups
        profiles[3]["process"] = profiles[2]["process"]

    base_time = datetime(2024, 6, 1, tzinfo=UTC)
    events: list[UnknownAgentEvent] = []
    labels: list[int] = []
    for agent, prof in enumerate(profiles):
        for _ in range(rng.randint(min_events, max_events)):
            source = rng.choice(prof["sources"])
            base_host: str = prof["host"]
            if rng.random() < noise:
                base_host = base_host.split(".", 1)[0] if "." in base_host else f"{base_host}.corp.example.com"
            if rng.random() < noise / 2:
                base_host = base_host.upper()
            host: str | None = base_host
            pid = rng.randint(100, 65000)
            process: str | None = rng.choice(
                [
                    f"{prof['process']} [{pid}]",
                    f"{prof['process']} (pid {pid})",
                    f"pid={pid} {prof['process']}",
                ]
            )
            ua: str | None = _bump_version(prof["ua"], rng) if rng.random() < noise else prof["ua"]
            base_url, paths, _ = prof["api"]
            path = rng.choice(paths).replace("{id}", _random_id(rng))
            if rng.random() < 0.3:
                path += f"?api-version=2024-0{rng.randint(2, 6)}-01"
            url = base_url + path
            if rng.random() < noise / 2:
                url = url.replace("https://", "")
            if rng.random() < noise / 2 and url.startswith("https://"):
                scheme_host, _, rest = url[len("https://") :].partition("/")
                url = f"https://{scheme_host.upper()}:443/{rest}"
            model: str | None = rng.choice(prof["models"])
            if model is not None and rng.random() < noise / 2:
                model = f"{model}-2024-0{rng.randint(1, 9)}-{rng.randint(10, 28)}"
            ip = rng.choice(prof["ips"][1:]) if rng.random() < noise else prof["ips"][0]
            address: str | None = f"{ip}:{rng.randint(1024, 65535)}" if rng.random() < 0.5 else ip
            endpoint: str | None = url
            if source == "edr":
                ua = model = None
                endpoint = url.split("://", 1)[-1].split("/", 1)[0] + (":443" if url.startswith("https") else "")
            elif source == "proxy":
                process = None
                if rng.random() < 0.5:
                    host = None
            else:  # gateway
                process = host = None
            values: list[str | None] = [host, process, ua, endpoint, model, address]
            for i in [i for i, v in enumerate(values) if v is not None]:
                if rng.random() < noise / 2 and sum(v is not None for v in values) > 2:
                    values[i] = None
            metadata: dict[str, Any] = {
                "bytes": rng.randint(200, 90000),
                "status": rng.choice([200, 200, 200, 429]),
            }
            if prof["user"] and source != "gateway" and rng.random() >= noise / 2:
                metadata["user"] = prof["user"]
            observed = base_time + timedelta(seconds=rng.randint(0, 7 * 86400))
            events.append(
                UnknownAgentEvent(
                    source=source,
                    host=values[0],
                    process=values[1],
                    user_agent=values[2],
                    endpoint=values[3],
                    model=values[4],
                    client_address=values[5],
                    observed_at=observed.isoformat(),
                    metadata=metadata,
                )
            )
            labels.append(agent)
    order = list(range(len(events)))
    rng.shuffle(order)
    return SyntheticStream(events=[events[i] for i in order], labels=[labels[i] for i in order])
