"""Features of unknown-agent events (weighted tokens, TF-IDF) and the distance between events."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction import DictVectorizer
from sklearn.feature_extraction.text import TfidfTransformer

from agentgov.ml.discovery.events import (
    EventLike,
    _address_parts,
    _as_event,
    _endpoint_parts,
    _host_parts,
    _metadata_items,
    _model_parts,
    _process_parts,
    _site,
    _token,
    _ua_products,
)
from agentgov.ml.discovery.params import (
    _GROUP_NAMES,
    CONFLICT_DISTANCE,
    CONFLICT_PREFIXES,
    COVERAGE_EXPONENT,
    FIELD_GROUPS,
    FIELD_WEIGHTS,
)

# ------------------------------------------------------------------------------------------- features


def event_tokens(event: EventLike) -> list[str]:
    """Prefixed feature tokens of one event (``"host:build-07.corp"``, ``"uav:openai/1"``, ...).

    Tokens never contain whitespace; the prefix before the first ``:`` selects the weight in
    :data:`FIELD_WEIGHTS`. An event with no usable field yields ``[]``.
    """
    ev = _as_event(event)
    toks: list[str] = []
    host, hostname = _host_parts(ev.host)
    if host:
        toks.append(f"host:{host}")
        toks.append(f"hostname:{hostname}")
    exe, script = _process_parts(ev.process)
    if exe:
        toks.append(f"exe:{_token(exe)}")
    if script:
        toks.append(f"script:{_token(script)}")
    products = _ua_products(ev.user_agent)
    if products:
        # one token for the product set and one for the versioned signature: a browser-like UA with
        # four products must not weigh four times as much as "curl/8"
        toks.append("ua:" + "+".join(sorted({_token(p) for p, _ in products})))
        toks.append("uav:" + "+".join(sorted(f"{_token(p)}/{v}" if v else _token(p) for p, v in products)))
    ephost, path = _endpoint_parts(ev.endpoint)
    if ephost:
        toks.append(f"ephost:{ephost}")
        site = _site(ephost)
        if site and site != ephost:
            toks.append(f"epsite:{site}")
        if path:
            toks.append(f"path:{ephost}{_token(path)}")
    model, family = _model_parts(ev.model)
    if model:
        toks.append(f"model:{model}")
        if family and family != model:
            toks.append(f"modelfam:{family}")
    ip, net = _address_parts(ev.client_address)
    if ip:
        toks.append(f"ip:{ip}")
        toks.append(f"net:{net}")
    toks.extend(f"meta:{k}={v}" for k, v in _metadata_items(ev.metadata))
    return toks


def event_feature_text(event: EventLike) -> str:
    """Space-joined :func:`event_tokens`: the compact form to store as a candidate's representative text."""
    return " ".join(event_tokens(event))


def _weighted(tokens: Iterable[str]) -> dict[str, float]:
    bag: dict[str, float] = {}
    for tok in tokens:
        weight = FIELD_WEIGHTS.get(tok.split(":", 1)[0], 1.0)
        bag[tok] = max(bag.get(tok, 0.0), weight)  # repeats do not add up: presence matters, not counts
    return bag


def _vectorize(token_lists: Sequence[Sequence[str]]) -> tuple[sp.csr_matrix, np.ndarray]:
    """L2-normalised field-weighted TF-IDF rows and the field-group index of every column."""
    bags = [_weighted(toks) for toks in token_lists]
    if not any(bags):
        return sp.csr_matrix((len(bags), 0), dtype=np.float64), np.zeros(0, dtype=np.int64)
    vectorizer = DictVectorizer(dtype=np.float64, sort=True)
    counts = vectorizer.fit_transform(bags)
    tfidf = sp.csr_matrix(TfidfTransformer(norm="l2", smooth_idf=True).fit_transform(counts))
    group_index = {g: i for i, g in enumerate(_GROUP_NAMES)}
    columns = np.array(
        [
            group_index[FIELD_GROUPS.get(str(name).split(":", 1)[0], "metadata")]
            for name in vectorizer.get_feature_names_out()
        ],
        dtype=np.int64,
    )
    return tfidf, columns


def event_features(events: Sequence[EventLike]) -> sp.csr_matrix:
    """Sparse ``(len(events), n_tokens)`` matrix of L2-normalised, field-weighted TF-IDF token vectors.

    Columns are the sorted distinct tokens of this batch and IDF is computed over this batch, so rows are
    comparable only within one call. An event without usable fields is an all-zero row.
    """
    return _vectorize([event_tokens(e) for e in events])[0]


def _conflict_codes(token_lists: Sequence[Sequence[str]]) -> np.ndarray:
    """``(n, len(CONFLICT_PREFIXES))`` integer codes of the single-valued fields; -1 where absent."""
    codes = np.full((len(token_lists), len(CONFLICT_PREFIXES)), -1, dtype=np.int64)
    for k, prefix in enumerate(CONFLICT_PREFIXES):
        seen: dict[str, int] = {}
        lead = f"{prefix}:"
        for i, toks in enumerate(token_lists):
            value = next((t for t in toks if t.startswith(lead)), None)
            if value is not None:
                codes[i, k] = seen.setdefault(value, len(seen))
    return codes


def _distances(x: sp.csr_matrix, columns: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Dense field-aware distance matrix; see :func:`pairwise_distances` for the definition."""
    n = x.shape[0]
    membership = sp.csr_matrix(
        (np.ones(len(columns)), (np.arange(len(columns)), columns)), shape=(len(columns), len(_GROUP_NAMES))
    )
    energy = np.asarray((x.multiply(x) @ membership).todense())  # (n, groups): squared norm per field group
    present = (energy > 0).astype(np.float64)
    restricted = energy @ present.T  # [i, j]: squared norm of row i over the groups row j also has
    norms = np.sqrt(restricted * restricted.T)
    sim = np.asarray((x @ x.T).todense())
    np.divide(sim, norms, out=sim, where=norms > 0)  # cosine over the shared field groups
    sim[norms == 0] = 0.0
    total = energy.sum(axis=1)
    coverage = np.zeros_like(norms)
    np.divide(norms, np.sqrt(np.outer(total, total)), out=coverage, where=norms > 0)
    sim *= coverage**COVERAGE_EXPONENT
    dist = np.clip(1.0 - sim, 0.0, 1.0)
    for k in range(codes.shape[1]):
        c = codes[:, k]
        conflict = (c[:, None] >= 0) & (c[None, :] >= 0) & (c[:, None] != c[None, :])
        dist[conflict] = CONFLICT_DISTANCE
    np.fill_diagonal(dist, 0.0)
    return dist if n else np.zeros((0, 0))


def pairwise_distances(events: Sequence[EventLike]) -> np.ndarray:
    """Dense ``(n, n)`` matrix of the distances :func:`cluster_events` uses, for inspection and tuning.

    For events ``a`` and ``b`` with TF-IDF vectors split into field groups (:data:`FIELD_GROUPS`):

    * ``F`` = the groups present in both; ``cos_F`` = cosine of the vectors restricted to ``F``;
    * ``coverage`` = ``|a_F| |b_F| / (|a| |b|)``, the share of both events' weight that lies in ``F``;
    * ``distance = 1 - cos_F * coverage ** COVERAGE_EXPONENT`` (in ``[0, 1]``; 1 when ``F`` is empty);
    * but :data:`CONFLICT_DISTANCE` when both carry a :data:`CONFLICT_PREFIXES` field with different
      values (e.g. two different host names).

    With ``COVERAGE_EXPONENT = 1`` and no conflicts this is plain cosine distance. The exponent < 1
    keeps a proxy line (address, user agent, URL) close to the EDR record (host, process, address) of the
    same agent even though each lacks half of the other's fields.
    """
    token_lists = [event_tokens(e) for e in events]
    x, columns = _vectorize(token_lists)
    return _distances(x, columns, _conflict_codes(token_lists))
