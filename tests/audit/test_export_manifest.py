"""Signed manifests of streamed exports, and `python run.py verify-export` as an auditor runs it: intact files
pass; an edited cell, a deleted row, reordered rows, an edited manifest or another key are caught."""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from agentgov.cli import main
from agentgov.config import ConfigError, Settings
from agentgov.exports.signing import derived_private_key, key_id, public_pem, service_key
from tests.audit.conftest import key_headers, log_entry, register_agent

API = "/api/v1"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def entries(client, tenant) -> list[dict[str, Any]]:
    agent = await register_agent(client, tenant["api_key"])
    return [
        await log_entry(client, tenant["api_key"], agent["id"], action="write", resource=f"doc-{n}", input={"n": n})
        for n in range(6)
    ]


async def exported(client: Any, api_key: str, query: str, folder: Path) -> tuple[Path, Path, Path, dict]:
    """Export, then save the file, its manifest and the public key as an auditor would receive them."""
    response = await client.get(f"{API}/audit/export?{query}", headers=key_headers(api_key))
    assert response.status_code == 200
    data = await response.get_data()
    export_id = response.headers["X-Export-Id"]
    assert response.headers["Link"] == f'</api/v1/audit/export/manifest/{export_id}>; rel="describedby"'
    manifest = await (
        await client.get(f"{API}/audit/export/manifest/{export_id}", headers=key_headers(api_key))
    ).get_json()
    public = await (await client.get(f"{API}/audit/export/public-key")).get_json()
    paths = folder / "export.out", folder / "manifest.json", folder / "key.pem"
    paths[0].write_bytes(data)
    paths[1].write_text(json.dumps(manifest))
    paths[2].write_text(public["public_key_pem"])
    return *paths, manifest


def verify(file: Path, manifest: Path, key: Path) -> int:
    return main(["verify-export", str(file), "--manifest", str(manifest), "--public-key", str(key)])


async def test_the_manifest_describes_the_export(client, tenant, entries, tmp_path) -> None:
    file, _, _, manifest = await exported(client, tenant["api_key"], "format=csv", tmp_path)
    assert manifest["export_id"] and manifest["tenant_id"] == tenant["id"] and manifest["format"] == "csv"
    assert manifest["rows"] == 6 and manifest["filters"] == {}
    assert manifest["first_sequence"] == entries[0]["sequence"] and manifest["last_sequence"] == entries[-1]["sequence"]
    assert manifest["chain_head"] == {"sequence": entries[-1]["sequence"], "signature": entries[-1]["signature"]}
    assert manifest["bytes"] == len(file.read_bytes()) and manifest["algorithm"] == "Ed25519"
    public = await (await client.get(f"{API}/audit/export/public-key")).get_json()
    assert manifest["key_id"] == public["key_id"] and base64.b64decode(public["public_key"])


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
async def test_an_intact_export_verifies_with_the_command_line(client, tenant, entries, tmp_path, fmt: str) -> None:
    file, manifest, key, _ = await exported(client, tenant["api_key"], f"format={fmt}", tmp_path)
    env = {"PATH": os.environ.get("PATH", ""), "ENV": "production"}  # no database, no secret
    with trio.fail_after(60):
        done = await trio.run_process(
            [
                sys.executable,
                "run.py",
                "verify-export",
                str(file),
                "--manifest",
                str(manifest),
                "--public-key",
                str(key),
            ],
            cwd=ROOT,
            env=env,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.decode().startswith("intact: 6 rows")


def _edit_csv(text: str) -> str:
    return text.replace("doc-3", "doc-9")


def _delete_csv_row(text: str) -> str:
    lines = text.split("\r\n")
    return "\r\n".join(lines[:3] + lines[4:])


def _swap_csv_rows(text: str) -> str:
    lines = text.split("\r\n")
    lines[2], lines[3] = lines[3], lines[2]
    return "\r\n".join(lines)


@pytest.mark.parametrize("tamper", [_edit_csv, _delete_csv_row, _swap_csv_rows])
async def test_tampered_files_are_caught(client, tenant, entries, tmp_path, tamper, capsys) -> None:
    file, manifest, key, _ = await exported(client, tenant["api_key"], "format=csv", tmp_path)
    assert verify(file, manifest, key) == 0
    file.write_bytes(tamper(file.read_bytes().decode()).encode())
    assert verify(file, manifest, key) == 1
    assert "TAMPERED" in capsys.readouterr().out


async def test_a_rewritten_manifest_or_another_key_is_caught(client, tenant, entries, tmp_path, capsys) -> None:
    file, manifest_path, key, manifest = await exported(client, tenant["api_key"], "format=jsonl", tmp_path)
    lines = file.read_text().splitlines()
    file.write_text("\n".join(lines[:-1]) + "\n")  # drop the last row and make the manifest agree
    forged = {**manifest, "rows": 5, "last_sequence": manifest["last_sequence"] - 1}
    manifest_path.write_text(json.dumps(forged))
    assert verify(file, manifest_path, key) == 1
    assert "signature does not verify" in capsys.readouterr().out
    other = tmp_path / "other.pem"
    other.write_text(public_pem(derived_private_key("another service").public_key()))
    manifest_path.write_text(json.dumps(manifest))
    assert verify(file, manifest_path, other) == 1
    (tmp_path / "bad.json").write_text("[1, 2")
    assert verify(file, tmp_path / "bad.json", key) == 2


async def test_a_filtered_export_verifies_and_names_its_filters(client, tenant, entries, tmp_path) -> None:
    agent_id = entries[0]["agent_id"]
    file, manifest_path, key, manifest = await exported(
        client, tenant["api_key"], f"format=json&agent_id={agent_id}&action=write", tmp_path
    )
    assert manifest["filters"] == {"agent_id": agent_id, "action": "write"} and manifest["rows"] == 6
    assert verify(file, manifest_path, key) == 0


async def test_manifests_are_the_tenants_own(client, tenant, other_tenant, entries, tmp_path, role_keys) -> None:
    *_, manifest = await exported(client, tenant["api_key"], "format=csv", tmp_path)
    url = f"{API}/audit/export/manifest/{manifest['export_id']}"
    response = await client.get(url, headers=key_headers(other_tenant["api_key"]))
    assert response.status_code == 404 and (await response.get_json())["detail"] == "Export manifest not found"
    assert (await client.get(url, headers=key_headers(role_keys["Developer"]))).status_code == 403
    assert (await client.get(url)).status_code == 401
    unknown = f"{API}/audit/export/manifest/00000000-0000-4000-8000-000000000000"
    assert (await client.get(unknown, headers=key_headers(tenant["api_key"]))).status_code == 404
    bad = await client.get(f"{API}/audit/export/manifest/nope", headers=key_headers(tenant["api_key"]))
    assert bad.status_code == 422


def test_the_signing_key_is_required_in_production_and_checked() -> None:
    strong = {"ADMIN_KEY": "a" * 32, "JWT_SECRET": "b" * 32, "WEBHOOK_SECRET": "c" * 32, "AUDIT_SECRET": "d" * 32}
    with pytest.raises(ConfigError, match="EXPORT_SIGNING_KEY is missing"):
        Settings.from_env({"ENV": "production", **strong})
    for bad in ("not base64!", base64.b64encode(b"short").decode()):
        with pytest.raises(ConfigError, match="EXPORT_SIGNING_KEY must be base64 of 32 bytes"):
            Settings.from_env({**strong, "EXPORT_SIGNING_KEY": bad})
    chosen = base64.b64encode(bytes(range(32))).decode()
    settings = Settings.from_env({"ENV": "production", **strong, "EXPORT_SIGNING_KEY": chosen})
    assert key_id(service_key(settings).public_key()) == key_id(service_key(settings).public_key())
    development = Settings.from_env(strong)  # derived from the audit secret: the same after a restart
    assert key_id(service_key(development).public_key()) == key_id(service_key(Settings.from_env(strong)).public_key())
    assert key_id(service_key(development).public_key()) != key_id(service_key(settings).public_key())


@pytest.mark.parametrize(
    ("deleted", "named"),
    [("sequence = 1", "does not start at sequence 1"), ("sequence <= 2", "does not start at sequence 1")],
)
async def test_entries_deleted_from_the_start_of_the_chain_are_caught(
    app, client, tenant, entries, tmp_path, capsys, deleted: str, named: str
) -> None:
    """Someone with database access deletes the oldest entries: the rest still link to each other, but an
    unfiltered export is the whole chain, so the offline check says the start is missing."""

    def run(conn: Any) -> None:
        conn.execute(f"DELETE FROM audit_entries WHERE tenant_id = :t AND {deleted}", {"t": tenant["id"]})

    await app.extensions["agentgov"].db.write(run)
    file, manifest, key, _ = await exported(client, tenant["api_key"], "format=jsonl", tmp_path)
    assert verify(file, manifest, key) == 1
    assert named in capsys.readouterr().out


def test_a_file_that_stops_short_of_the_head_is_caught() -> None:
    """An unfiltered file must end at the manifest's chain head (entries deleted from the end are missing)."""
    from agentgov.exports.manifest import _whole_chain_problems

    first = {"sequence": 1, "prev_signature": "0" * 64, "signature": "a" * 64}
    second = {"sequence": 2, "prev_signature": "a" * 64, "signature": "b" * 64}
    assert _whole_chain_problems([first, second], {"sequence": 2, "signature": "b" * 64}) == []
    assert "later entries are missing" in _whole_chain_problems([first], {"sequence": 2, "signature": "b" * 64})[0]
    assert "holds no entry" in _whole_chain_problems([], {"sequence": 2, "signature": "b" * 64})[0]
    assert "another signature" in _whole_chain_problems([first, second], {"sequence": 2, "signature": "c" * 64})[0]
    assert _whole_chain_problems([], None) == []
