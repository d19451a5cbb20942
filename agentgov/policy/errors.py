"""Exceptions raised by the policy layer.

Every exception here derives from :class:`PolicyError` and from :class:`ValueError`, so the HTTP layer can map
the whole family to ``422 Unprocessable Entity`` and use ``str(exc)`` as the ``detail``:

* :class:`PolicyValidationError` -- a policy document was rejected on write (syntax, type, annotation or
  document-level problem). ``str(exc)`` names the document and, for each problem, the policy (by ``@id`` and
  1-based position) and what is wrong. :attr:`PolicyValidationError.problems` carries the same information
  structured, for a richer error body.
* :class:`InvalidRequestError` -- a check request (agent attributes, action, resource or context) cannot be
  evaluated, e.g. ``context.amount`` is a string although the context schema declares a ``Long``.
* :class:`TemplateParameterError` -- parameters given to a policy template are unknown or mistyped.

Cedar *evaluation* errors are never raised: they are reported in the decision (see ``Decision.errors``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ProblemKind = Literal["document", "syntax", "type", "annotation", "unsupported", "complexity"]


class PolicyError(ValueError):
    """Base class of every error raised by :mod:`agentgov.policy`."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason a policy document was rejected.

    ``position`` is the 1-based position of the policy inside its document (``None`` when the problem concerns
    the whole document, e.g. a syntax error, which Cedar does not locate to a policy). ``policy_id`` is the
    policy's ``@id`` annotation when it has a valid one.
    """

    kind: ProblemKind
    message: str
    position: int | None = None
    policy_id: str | None = None

    @property
    def policy_label(self) -> str | None:
        """``policy 'pii-export' (#2)``, ``policy #2`` or ``None`` for a document-level problem."""
        if self.position is None:
            return None
        if self.policy_id:
            return f"policy '{self.policy_id}' (#{self.position})"
        return f"policy #{self.position}"

    def __str__(self) -> str:
        kind = {"syntax": "syntax error", "type": "type error", "annotation": "invalid annotation"}.get(
            self.kind, self.kind
        )
        label = self.policy_label
        return f"{label}: {kind}: {self.message}" if label else f"{kind}: {self.message}"

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form, for an HTTP error body."""
        return {
            "kind": self.kind,
            "message": self.message,
            "position": self.position,
            "policy_id": self.policy_id,
        }


class PolicyValidationError(PolicyError):
    """A policy document failed validation on write.

    Message format (one line; problems separated by ``"; "``)::

        invalid policy document 'payments': policy 'pay-cap' (#2): type error: the types Long and String are
        not compatible; policy #3: invalid annotation: @severity must be one of low, medium, high, critical,
        got "urgent"
    """

    def __init__(self, document: str, problems: list[Problem] | tuple[Problem, ...]) -> None:
        if not problems:
            raise ValueError("PolicyValidationError needs at least one problem")
        self.document = document
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__(f"invalid policy document '{document}': " + "; ".join(map(str, self.problems)))


class InvalidRequestError(PolicyError):
    """A check request cannot be evaluated because one of its inputs is malformed.

    The message names the offending field, e.g. ``context.amount must be an integer (Cedar has no floats),
    got 12.5``.
    """


class TemplateParameterError(PolicyError):
    """Parameters passed to a policy template are unknown, missing or of the wrong type.

    The message names the template and the parameter, e.g. ``template 'payment-approval': parameter
    'threshold' must be an integer, got "high"``.
    """
