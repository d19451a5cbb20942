"""Shadow-agent discovery: the tuned parameters (thresholds, weights, field groups); figures in the package
docstring."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

#: Distance below which clusters of events are joined (average linkage); see :func:`pairwise_distances`
#: for the distance. Chosen on synthetic streams (seeds 0-9) and checked on held-out seeds (module
#: docstring). 0.8-0.85 are within 0.01 ARI of each other; 0.8 collapses fewer distinct agents. Lower
#: thresholds split agents seen through several sensors (ARI 0.87 at 0.7, noise 0.3), higher ones merge
#: agents that share an API and a subnet.
DEFAULT_DISTANCE_THRESHOLD: Final = 0.8

#: Default for :func:`merge_candidates` (same distance, candidate level). A little stricter than
#: clustering because a merge is shown to users; see its docstring for figures.
DEFAULT_MERGE_THRESHOLD: Final = 0.75

#: Exponent of the coverage factor in :func:`pairwise_distances`: 1 gives plain cosine (a missing field
#: counts like a different one), 0 ignores missing fields entirely; 0.5 was best on the tuning seeds
#: (noise 0.5: ARI 0.94 vs 0.83 for plain cosine with conflicts, 0.80 without).
COVERAGE_EXPONENT: Final = 0.5

#: Token prefixes that name *one* value per agent: two events that both carry one of these with
#: different values are "cannot-link" evidence and get :data:`CONFLICT_DISTANCE`. One agent runs on one
#: host, as one executable/script, with one HTTP client (product set; versions may change).
CONFLICT_PREFIXES: Final = ("hostname", "exe", "script", "ua")

#: Distance given to conflicting event pairs (the maximum cosine distance). Soft: with average linkage
#: a few conflicts inside an otherwise tight cluster do not split it.
CONFLICT_DISTANCE: Final = 2.0

#: Above this many *distinct* token bags :func:`cluster_events` / :func:`merge_candidates` refuse: the
#: distance computation is dense (several n x n float64 matrices; ~200 MB at this size). Cluster in
#: batches and reconcile with :func:`merge_candidates`.
MAX_DISTINCT_EVENTS: Final = 2000

#: Weight of one token by prefix, before IDF. Host and process identify an agent best; network and
#: endpoint tokens link events of sensors that do not see the host or process.
FIELD_WEIGHTS: Final[Mapping[str, float]] = MappingProxyType(
    {
        "host": 1.0,  # full host name
        "hostname": 3.0,  # first DNS label, so "build-07" matches "build-07.corp.example.com"
        "exe": 2.0,  # executable basename, interpreter version stripped
        "script": 3.0,  # script / module / jar the interpreter runs
        "ua": 1.0,  # user-agent products (sorted, "+"-joined)
        "uav": 1.0,  # user-agent products with major versions
        "ephost": 1.5,  # endpoint host
        "epsite": 0.5,  # endpoint registrable domain (approximate)
        "path": 0.3,  # endpoint path with ids replaced
        "model": 1.0,  # model, date suffix stripped
        "modelfam": 0.3,  # model family ("gpt", "claude", ...)
        "ip": 3.0,  # client address without port
        "net": 1.5,  # client /24 (IPv4) or /64 (IPv6)
        "meta": 2.0,  # allow-listed metadata values (user, service account, image, ...)
    }
)

#: Field group of each token prefix. Similarity is computed over the groups *both* events carry.
FIELD_GROUPS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "host": "host",
        "hostname": "host",
        "exe": "process",
        "script": "process",
        "ua": "user_agent",
        "uav": "user_agent",
        "ephost": "endpoint",
        "epsite": "endpoint",
        "path": "endpoint",
        "model": "model",
        "modelfam": "model",
        "ip": "address",
        "net": "address",
        "meta": "metadata",
    }
)
_GROUP_NAMES: Final = tuple(sorted(set(FIELD_GROUPS.values())))

#: Metadata keys whose values identify an agent; other metadata is ignored.
IDENTIFYING_METADATA_KEYS: Final = (
    "user",
    "username",
    "account",
    "service_account",
    "principal",
    "namespace",
    "image",
    "container_image",
)
