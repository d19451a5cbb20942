"""The unsupervised anomaly detector: each agent's normal behaviour learnt from its own audit history.

Pure and synchronous (no I/O, no trio): `fit` runs in a worker process, `AnomalyModel.scorer()` scores at
ingest. See `model` for the method.
"""

from agentgov.ml.anomaly.errors import ModelFormatError, NotEnoughHistory
from agentgov.ml.anomaly.model import AnomalyModel, AnomalyScore, Scorer, fit
from agentgov.ml.anomaly.params import AnomalyParams
from agentgov.ml.anomaly.records import ActionEvent

__all__ = [
    "ActionEvent",
    "AnomalyModel",
    "AnomalyParams",
    "AnomalyScore",
    "ModelFormatError",
    "NotEnoughHistory",
    "Scorer",
    "fit",
]
