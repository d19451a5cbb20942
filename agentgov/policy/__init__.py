"""Cedar policy layer: validation on write, compiled per-tenant policy sets, decisions, risk and templates.

Pure and synchronous (no trio, no I/O). Typical use by the per-tenant policy actor::

    doc = PolicyDocument.from_mapping(body)          # PolicyValidationError -> 422
    validated = validate_document(doc)               # PolicyValidationError -> 422
    policy_set = compile_policy_set(active_docs, default_allow=tenant_default_allow)
    decision = policy_set.evaluate(agent_record, action, resource, context)   # InvalidRequestError -> 422
    body = decision.to_response()

Modules: :mod:`.schema` (entity model and Cedar schema), :mod:`.annotations`, :mod:`.document` (validation),
:mod:`.request` (Cedar request building), :mod:`.engine` (compiled sets, evaluation, ``canary_ok``),
:mod:`.decision`, :mod:`.risk`, :mod:`.templates` (with :mod:`.template_model` and :mod:`.template_cedar`),
:mod:`.errors`.
"""

from .annotations import SEVERITIES
from .decision import Decision, PolicyEvaluationError
from .document import PolicyDocument, PolicyInfo, ValidatedDocument, validate_document
from .engine import CompiledPolicySet, canary_ok, compile_policy_set
from .errors import InvalidRequestError, PolicyError, PolicyValidationError, Problem, TemplateParameterError
from .request import AgentAttributes
from .risk import RiskAssessment, RiskFactor, assess_risk
from .schema import describe_context
from .template_model import PolicyTemplate
from .templates import TEMPLATES, get_template

__all__ = [
    "SEVERITIES",
    "TEMPLATES",
    "AgentAttributes",
    "CompiledPolicySet",
    "Decision",
    "InvalidRequestError",
    "PolicyDocument",
    "PolicyError",
    "PolicyEvaluationError",
    "PolicyInfo",
    "PolicyTemplate",
    "PolicyValidationError",
    "Problem",
    "RiskAssessment",
    "RiskFactor",
    "TemplateParameterError",
    "ValidatedDocument",
    "assess_risk",
    "canary_ok",
    "compile_policy_set",
    "describe_context",
    "get_template",
    "validate_document",
]
