"""Signing and verifying export manifests with Ed25519.

The service's key is `EXPORT_SIGNING_KEY` (base64 of a 32-byte Ed25519 private key; required in production;
in development, when unset, derived from the audit secret so that it stays the same across restarts).
`GET /audit/export/public-key` publishes the public key; an auditor verifies with it alone
(`python run.py verify-export`), without the database or any server secret.

A manifest is signed over its canonical JSON (sorted keys, no spaces, UTF-8) without the `signature` field;
`key_id` (the first 16 hex digits of the public key's SHA-256) names the key it was signed with.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

if TYPE_CHECKING:
    from agentgov.config import Settings

ALGORITHM = "Ed25519"


def parse_private_key(text: str) -> Ed25519PrivateKey:
    """The key from base64 of its 32 raw bytes. Raises `ValueError` naming what is wrong."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("EXPORT_SIGNING_KEY must be base64 of 32 bytes") from None
    if len(raw) != 32:
        raise ValueError(f"EXPORT_SIGNING_KEY must be base64 of 32 bytes, not {len(raw)}")
    return Ed25519PrivateKey.from_private_bytes(raw)


def service_key(settings: Settings) -> Ed25519PrivateKey:
    """The service's signing key (see the module docstring)."""
    if settings.export_signing_key:
        return parse_private_key(settings.export_signing_key)
    return derived_private_key(settings.effective_audit_secret)


def derived_private_key(secret: str) -> Ed25519PrivateKey:
    """A development key derived from a server secret (stable across restarts)."""
    seed = HKDF(algorithm=SHA256(), length=32, salt=None, info=b"agentgov export signing key").derive(
        secret.encode("utf-8")
    )
    return Ed25519PrivateKey.from_private_bytes(seed)


def public_raw(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id(key: Ed25519PublicKey) -> str:
    return hashlib.sha256(public_raw(key)).hexdigest()[:16]


def public_pem(key: Ed25519PublicKey) -> str:
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def load_public_key(text: str) -> Ed25519PublicKey:
    """A public key from PEM, or base64 of its 32 raw bytes. Raises `ValueError`."""
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = serialization.load_pem_public_key(text.encode())
            if not isinstance(key, Ed25519PublicKey):
                raise ValueError("not an Ed25519 public key")
            return key
        return Ed25519PublicKey.from_public_bytes(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError, TypeError) as exc:
        raise ValueError(f"unreadable public key: {exc}") from None


def _payload(manifest: dict[str, Any]) -> bytes:
    unsigned = {k: v for k, v in manifest.items() if k != "signature"}
    return json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def sign_manifest(manifest: dict[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """`manifest` with `algorithm`, `key_id` and `signature` (base64) added."""
    signed = {**manifest, "algorithm": ALGORITHM, "key_id": key_id(key.public_key())}
    return {**signed, "signature": base64.b64encode(key.sign(_payload(signed))).decode("ascii")}


def manifest_signed_by(manifest: dict[str, Any], key: Ed25519PublicKey) -> bool:
    try:
        key.verify(base64.b64decode(str(manifest.get("signature", "")), validate=True), _payload(manifest))
    except (InvalidSignature, binascii.Error, ValueError):
        return False
    return True
