"""Validation of policy documents on write: syntax, types, annotations, document rules."""

from __future__ import annotations

import pytest

from agentgov.policy import (
    PolicyDocument,
    PolicyValidationError,
    compile_policy_set,
    validate_document,
)


def _problems(cedar: str, name: str = "doc") -> PolicyValidationError:
    with pytest.raises(PolicyValidationError) as info:
        validate_document(PolicyDocument(name, cedar))
    return info.value


def test_multiple_policies_per_document_are_parsed_in_order() -> None:
    validated = validate_document(
        PolicyDocument(
            "baseline",
            """
            @id("allow-active") @reason("active agents may act") @severity("low")
            permit (principal, action, resource) when { principal.status == "active" };

            forbid (principal, action == Action::"payments.transfer", resource)
            when { context has amount && context.amount > 100 };

            @id("approve-export") @requires_approval("true")
            permit (principal, action in [Action::"crm.export", Action::"erp.export"], resource);
            """,
        )
    )
    infos = validated.policies
    assert [p.position for p in infos] == [1, 2, 3]
    assert [p.ref for p in infos] == ["allow-active", "baseline#2", "approve-export"]
    assert [p.effect for p in infos] == ["permit", "forbid", "permit"]
    assert infos[0].reason == "active agents may act" and infos[0].severity == "low"
    assert infos[2].requires_approval and not infos[0].requires_approval


def test_syntax_error_names_document() -> None:
    err = _problems("permit (principal, action, resource) when { principal.name == ", name="broken")
    assert str(err).startswith("invalid policy document 'broken': syntax error: ")
    assert [p.kind for p in err.problems] == ["syntax"]
    assert isinstance(err, ValueError)


def test_type_error_string_compared_to_long_names_policy_by_id_and_position() -> None:
    err = _problems(
        """
        @id("ok") permit (principal, action, resource);
        @id("cmp") forbid (principal, action, resource) when { principal.name > 3 };
        """
    )
    (problem,) = err.problems
    assert problem.kind == "type"
    assert problem.position == 2 and problem.policy_id == "cmp"
    assert "policy 'cmp' (#2): type error:" in str(err)
    assert "Long" in problem.message and "String" in problem.message


def test_unknown_entity_attribute_is_a_type_error() -> None:
    err = _problems('permit (principal, action, resource) when { principal.department == "it" };')
    (problem,) = err.problems
    assert problem.kind == "type" and problem.position == 1 and problem.policy_id is None
    assert "`department`" in problem.message
    assert "policy #1: type error" in str(err)


def test_unknown_entity_type_is_a_type_error() -> None:
    err = _problems('permit (principal == User::"alice", action, resource);')
    assert "User" in str(err)


def test_undeclared_context_attribute_is_rejected_even_behind_has() -> None:
    # Cedar's validator alone accepts this (the closed context record makes it always false).
    err = _problems('permit (principal, action, resource) when { context has tenant && context.tenant == "x" };')
    (problem,) = err.problems
    assert "context attribute `tenant` is not declared" in problem.message
    assert "consent" in problem.message  # lists the declared vocabulary


def test_unguarded_optional_context_attribute_gets_a_has_hint() -> None:
    err = _problems("permit (principal, action, resource) when { context.consent == true };")
    assert "`context has consent && context.consent ...`" in str(err)
    validate_document(
        PolicyDocument(
            "ok",
            "permit (principal, action, resource) when { context has consent && context.consent == true };",
        )
    )


def test_unguarded_optional_risk_score_gets_a_has_hint() -> None:
    err = _problems("forbid (principal, action, resource) when { principal.risk_score >= 8000 };")
    assert "`principal has risk_score && principal.risk_score ...`" in str(err)


def test_decimal_risk_comparison_is_rejected_because_risk_is_basis_points() -> None:
    err = _problems(
        "forbid (principal, action, resource)\n"
        'when { principal has risk_score && principal.risk_score > decimal("0.8") };'
    )
    assert err.problems[0].kind == "type"


def test_arbitrary_action_literals_type_check() -> None:
    validate_document(
        PolicyDocument(
            "actions",
            """
            forbid (principal, action == Action::"payments.transfer", resource);
            forbid (principal, action, resource)
            when { action == Action::"shell.exec" || context.action like "sql.*" };
            forbid (principal, action in [Action::"a", Action::"we \\"quoted\\" one"], resource);
            """,
        )
    )


@pytest.mark.parametrize(
    ("annotations", "fragment"),
    [
        ('@severity("urgent")', "@severity must be one of low, medium, high, critical, got 'urgent'"),
        ('@severity("HIGH")', "@severity must be one of"),
        ('@requires_approval("yes")', '@requires_approval must be "true" or "false"'),
        ('@id("has space")', "@id must be"),
        ('@id("")', "@id must be"),
        ('@reason("   ")', "@reason must be"),
    ],
)
def test_bad_annotation_values(annotations: str, fragment: str) -> None:
    err = _problems(
        f'@id("first") permit (principal, action, resource);\n{annotations} permit (principal, action, resource);'
    )
    (problem,) = err.problems
    assert problem.kind == "annotation" and problem.position == 2
    assert fragment in problem.message
    assert "invalid annotation" in str(err)


def test_requires_approval_true_on_forbid_is_rejected() -> None:
    err = _problems('@id("f") @requires_approval("true") forbid (principal, action, resource);')
    assert "only allowed on permit policies" in str(err)
    validate_document(PolicyDocument("ok", '@requires_approval("false") forbid (principal, action, resource);'))


def test_other_annotations_are_allowed() -> None:
    validate_document(PolicyDocument("ok", '@owner("secops") @description("x") permit (principal, action, resource);'))


def test_duplicate_id_within_document() -> None:
    err = _problems('@id("a") permit (principal, action, resource);\n@id("a") forbid (principal, action, resource);')
    (problem,) = err.problems
    assert problem.position == 2 and "already used by policy #1" in problem.message


def test_all_problems_are_reported_together() -> None:
    err = _problems(
        """
        @severity("urgent") permit (principal, action, resource);
        @id("t") forbid (principal, action, resource) when { principal.name > 1 };
        """
    )
    assert [(p.position, p.kind) for p in err.problems] == [(1, "annotation"), (2, "type")]
    assert str(err).count(";") >= 1


@pytest.mark.parametrize("cedar", ["", "   ", "// only a comment"])
def test_document_without_policies_is_rejected(cedar: str) -> None:
    err = _problems(cedar)
    assert "contains no policy" in str(err)


def test_template_slots_are_unsupported() -> None:
    err = _problems("permit (principal == ?principal, action, resource);")
    assert err.problems[0].kind == "unsupported"


def test_empty_name_is_rejected() -> None:
    with pytest.raises(PolicyValidationError, match="name must not be empty"):
        validate_document(PolicyDocument(" ", "permit (principal, action, resource);"))


def test_from_mapping_checks_field_types() -> None:
    doc = PolicyDocument.from_mapping({"name": "n", "cedar": "permit (principal, action, resource);"})
    assert doc.is_active and doc.description is None
    with pytest.raises(PolicyValidationError) as info:
        PolicyDocument.from_mapping({"name": "n", "cedar": 3, "is_active": "yes"})
    assert [p.kind for p in info.value.problems] == ["document", "document"]
    assert info.value.problems[0].to_dict()["kind"] == "document"


def test_compile_rejects_an_id_used_by_two_active_documents() -> None:
    a = PolicyDocument("a", '@id("same") permit (principal, action, resource);')
    b = PolicyDocument("b", '@id("same") forbid (principal, action, resource);')
    with pytest.raises(PolicyValidationError, match="already used in policy document 'a'") as info:
        compile_policy_set([a, b])
    assert info.value.document == "b"
    inactive_b = PolicyDocument("b", b.cedar, is_active=False)
    assert len(compile_policy_set([a, inactive_b])) == 1


def test_compile_validates_documents() -> None:
    with pytest.raises(PolicyValidationError, match="invalid policy document 'bad'"):
        compile_policy_set([PolicyDocument("bad", "permit (principal, action, resource) when { 1 };")])


@pytest.mark.parametrize(
    ("condition", "fragment"),
    [
        ("(" * 700 + "1" + ")" * 700 + " == 1", "brackets nest more than 64 deep"),  # crashed the process
        ("[" * 2000 + "]" * 2000 + " == []", "brackets nest more than 64 deep"),
        ("{a: " * 2000 + "1" + "}" * 2000 + " == {}", "brackets nest more than 64 deep"),
        (" + ".join(["1"] * 12_000) + " == 1", "nests more than 200 deep"),
        ("context" + ".a" * 30_000 + " == 1", "nests more than 200 deep"),
        (" || ".join(["true"] * 12_000), "nests more than 200 deep"),
        (" || ".join(["true"] * 500), "nests more than 200 deep"),  # too deep for the JSON reader: was a 500
        ("(" * 60 + "1" + ("+1" * 330 + ")") * 60 + " == 1", "nests more than 200 deep"),  # a chain inside groups
        (" || ".join(f'action == Action::"t{n}"' for n in range(70)), "cannot be compiled"),  # the JSON reader's
        # limit when the policy set is built (from about 59 chained operators): was stored, then every write a 500
        ("if true then " * 3_000 + "true" + " else false" * 3_000, "nests more than 200 deep"),
    ],
)
def test_expressions_too_deep_or_long_for_the_cedar_library_are_refused_before_it_reads_them(
    condition: str, fragment: str
) -> None:
    """The library recurses on the native stack: these overflowed it and killed the process. They are refused
    as a `complexity` problem (a 422) without reaching it."""
    err = _problems(f"permit (principal, action, resource) when {{ {condition} }};")
    assert [p.kind for p in err.problems] == ["complexity"] and fragment in str(err)


def test_complexity_bounds_leave_room_for_real_policies() -> None:
    nested = "(" * 60 + "context has amount && context.amount > 10" + ")" * 60
    chain = " || ".join(f'action == Action::"tool.{n}"' for n in range(50))  # 50 terms compile
    listed = "action in [" + ", ".join(f'Action::"tool.{n}"' for n in range(3_000)) + "]"  # a set: flat
    strings = 'context has command && context.command == "' + "((((" * 100 + '"'  # brackets in a string: none
    many = "\n".join(
        "permit (principal, action, resource) when { " + " || ".join(["true"] * 50) + " };" for _ in range(3)
    )  # each policy counted on its own
    for cedar in (
        f"permit (principal, action, resource) when {{ {nested} }};",
        f"permit (principal, action, resource) when {{ {chain} }};",
        f"permit (principal, action, resource) when {{ {listed} }};",
        f"// {'(' * 500}\npermit (principal, action, resource) when {{ {strings} }};",
        many,
    ):
        validate_document(PolicyDocument("doc", cedar))


def test_a_comment_ends_at_a_carriage_return_as_cedar_reads_it() -> None:
    """Cedar ends a `//` comment at `\r` too: what follows is code, and its brackets count."""
    err = _problems("permit (principal, action, resource) when { // c\r" + "(" * 3000 + "1" + ")" * 3000 + " == 1 };")
    assert [p.kind for p in err.problems] == ["complexity"]


def test_a_stored_document_that_cannot_be_compiled_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """Documents stored before validation compiled them: building the set raises `PolicyValidationError`
    (so the policy actor leaves the document out) instead of the library's ValueError (a 500 on every write)."""
    from agentgov.policy import document

    monkeypatch.setattr(document, "compiles", lambda ests: True)
    cedar = "permit (principal, action, resource) when { " + " || ".join(["true"] * 80) + " };"
    stored = validate_document(PolicyDocument("old", cedar))
    with pytest.raises(PolicyValidationError, match="cannot be compiled"):
        compile_policy_set([stored])
