"""The text an agent is embedded as, and the hash that tells when a stored embedding is stale."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

__all__ = ["agent_text", "content_hash"]

_WS = re.compile(r"\s+")
# Capability identifiers such as "github.pr.comment" or "directory.reset_password" read as words.
_IDENT_SEP = re.compile(r"[._:/\\-]+")


def _clean(value: str) -> str:
    """NFC-normalise, turn control characters and lone surrogates into spaces, collapse whitespace, strip."""
    value = unicodedata.normalize("NFC", value)
    value = "".join(" " if unicodedata.category(ch) in {"Cc", "Cs"} else ch for ch in value)
    return _WS.sub(" ", value).strip()


def _sentence(value: str) -> str:
    return value if value[-1:] in {".", "!", "?"} else value + "."


def agent_text(
    *,
    name: str,
    agent_type: str = "",
    description: str = "",
    capabilities: Iterable[str] = (),
    owner: str = "",
) -> str:
    """Build the text an agent is embedded as, from its registered fields.

    The result reads like prose, which is what sentence-embedding models are trained on::

        Mail Dispatcher Bot (worker). Sends outbound email. Capabilities: bounce handle, smtp send.
        Owner: growth-team.

    It is deterministic and canonical: Unicode is NFC-normalised, whitespace collapsed, capability
    identifiers split at ``. _ : / -`` into words, de-duplicated and sorted (their order carries no
    meaning), and empty fields left out. So two agents whose fields differ only in such formatting get
    the same text, the same :func:`content_hash` and need no re-embedding.

    The embedder truncates long texts (the MiniLM model reads the first 256 word pieces, roughly 180
    English words): name and description come first so that they are the part that counts.

    Raises ``ValueError`` if ``name`` is empty after cleaning, ``TypeError`` if a field is not a ``str``.
    """
    fields = {"name": name, "agent_type": agent_type, "description": description, "owner": owner}
    for key, value in fields.items():
        if not isinstance(value, str):
            raise TypeError(f"{key} must be a str, got {type(value).__name__}")
    if isinstance(capabilities, str):
        raise TypeError("capabilities must be an iterable of str, not a str")
    caps: set[str] = set()
    for cap in capabilities:
        if not isinstance(cap, str):
            raise TypeError(f"capabilities must be str, got {type(cap).__name__}")
        words = _clean(_IDENT_SEP.sub(" ", cap))
        if words:
            caps.add(words)

    clean_name = _clean(name)
    if not clean_name:
        raise ValueError("an agent needs a non-empty name")
    clean_type = _clean(agent_type)
    head = f"{clean_name} ({clean_type})" if clean_type else clean_name
    parts = [_sentence(head)]
    clean_description = _clean(description)
    if clean_description:
        parts.append(_sentence(clean_description))
    if caps:
        parts.append(f"Capabilities: {', '.join(sorted(caps))}.")
    clean_owner = _clean(owner)
    if clean_owner:
        parts.append(_sentence(f"Owner: {clean_owner}"))
    return " ".join(parts)


def content_hash(text: str, *, model_name: str) -> str:
    """The staleness key of an embedding: hex sha256 over ``model_name`` and ``text``.

    Store it next to the embedding. The embedding is stale, and must be recomputed, exactly when
    ``content_hash(agent_text(...current fields...), model_name=embedder.model_name)`` differs from the
    stored value: the agent's text changed, or the model did (a model change alters every vector even
    for the same text, and vectors from two models cannot be compared).

    Raises ``TypeError`` if an argument is not a ``str``.
    """
    if not isinstance(text, str) or not isinstance(model_name, str):
        raise TypeError("text and model_name must be str")
    h = hashlib.sha256()
    # Length-prefix the model name so that no (model_name, text) pair collides with another.
    h.update(f"{len(model_name)}:{model_name}\n".encode())
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()
