"""The anomaly model on synthetic agents: what it flags, what it keeps quiet about, and its stored form."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest

from agentgov.ml.anomaly import ActionEvent, AnomalyModel, AnomalyParams, ModelFormatError, NotEnoughHistory, fit
from agentgov.ml.anomaly.model import AnomalyScore, learn_session_gap, tippett, truncated_product
from agentgov.ml.anomaly.profile import Context
from agentgov.ml.anomaly.sessions import SessionIndex

TASKS = [
    ["search_files", "read_file", "summarise"],
    ["list_invoices", "read_invoice", "send_email"],
    ["search_files", "read_file", "read_file", "send_email"],
]


def history(agent: str = "a1", days: int = 14, seed: int = 1) -> list[ActionEvent]:
    """An office-hours agent: a few sessions a weekday, each a known task with calls 3-15 s apart."""
    rng = random.Random(seed)
    events = []
    start = datetime(2026, 5, 4, tzinfo=UTC)  # a Monday
    for day in range(days):
        date = start + timedelta(days=day)
        if date.weekday() >= 5:
            continue
        for session in range(4):
            at = date + timedelta(hours=9 + 2 * session, minutes=rng.randint(0, 50))
            for tool in rng.choice(TASKS):
                at += timedelta(seconds=rng.uniform(3, 15))
                events.append(
                    ActionEvent(agent, tool, at, resource=f"res:{tool}", input={"folder": rng.choice(["a", "b"])})
                )
    return events


@pytest.fixture(scope="module")
def model() -> AnomalyModel:
    return fit(history())


def primed(model: AnomalyModel):
    scorer = model.scorer()
    for event in history():
        scorer.observe(event)
    return scorer


def normal_session(at: datetime, agent: str = "a1") -> list[ActionEvent]:
    return [
        ActionEvent(agent, tool, at + timedelta(seconds=8 * i), resource=f"res:{tool}", input={"folder": "a"})
        for i, tool in enumerate(TASKS[0])
    ]


MONDAY_10 = datetime(2026, 5, 25, 10, 0, tzinfo=UTC)


def test_normal_sessions_stay_under_the_threshold(model: AnomalyModel) -> None:
    scorer = primed(model)
    verdicts = [scorer.score(e) for day in range(5) for e in normal_session(MONDAY_10 + timedelta(days=day))]
    assert not any(v.is_anomaly for v in verdicts), [v for v in verdicts if v.is_anomaly]


def test_a_tool_never_used_is_flagged_and_named(model: AnomalyModel) -> None:
    scorer = primed(model)
    for event in normal_session(MONDAY_10)[:2]:
        scorer.score(event)
    verdict = scorer.score(ActionEvent("a1", "delete_repository", MONDAY_10 + timedelta(seconds=20)))
    assert verdict.is_anomaly and verdict.score > model.threshold
    assert verdict.kind == "new_tool"
    assert "tool delete_repository never used by this agent" in verdict.reasons


def test_a_burst_is_flagged(model: AnomalyModel) -> None:
    scorer = primed(model)
    at = MONDAY_10
    verdicts = []
    for _ in range(12):
        at += timedelta(seconds=0.4)
        verdicts.append(
            scorer.score(ActionEvent("a1", "read_file", at, resource="res:read_file", input={"folder": "a"}))
        )
    assert verdicts[-1].is_anomaly and verdicts[-1].kind == "burst"
    assert any("calls in 10 s" in r for r in verdicts[-1].reasons)


def test_work_at_night_on_a_sunday_is_flagged(model: AnomalyModel) -> None:
    scorer = primed(model)
    sunday_3am = datetime(2026, 5, 24, 3, 0, tzinfo=UTC)
    verdicts = [scorer.score(e) for e in normal_session(sunday_3am)]
    assert all(v.is_anomaly for v in verdicts)
    assert verdicts[0].kind == "off_hours" and "03:00 UTC" in verdicts[0].reasons[0]


def test_an_unseen_transition_scores_above_the_usual_one(model: AnomalyModel) -> None:
    scorer = primed(model)
    usual = scorer.score(normal_session(MONDAY_10)[0], remember=False)
    first = normal_session(MONDAY_10)[0]
    scorer.score(first)
    odd = scorer.score(
        ActionEvent(
            "a1", "send_email", first.timestamp + timedelta(seconds=6), resource="res:send_email", input={"folder": "a"}
        )
    )
    assert odd.score > usual.score
    assert any("transition search_files → send_email" in r for r in odd.reasons)


def test_new_argument_values_raise_the_score(model: AnomalyModel) -> None:
    scorer = primed(model)
    base = normal_session(MONDAY_10)[0]
    usual = scorer.score(base, remember=False)
    odd = scorer.score(
        ActionEvent("a1", base.action, base.timestamp, resource="res:elsewhere", input={"folder": "attacker@evil"}),
        remember=False,
    )
    assert odd.score > usual.score


def test_unknown_agent_scores_zero_with_a_reason(model: AnomalyModel) -> None:
    verdict = model.scorer().score(ActionEvent("stranger", "read_file", MONDAY_10))
    assert verdict.score == 0.0 and not verdict.is_anomaly and verdict.reasons == ["agent has no history in the model"]


def test_calibrated_alert_rate_is_near_the_target(model: AnomalyModel) -> None:
    assert 0.0 < model.threshold < 1.0
    assert model.metrics["calibration_alert_rate"] <= 2 * model.params.target_alert_rate
    assert model.metrics["modelled_agents"] == 1


def test_document_round_trips_through_json(model: AnomalyModel) -> None:
    copy = AnomalyModel.from_document(json.loads(json.dumps(model.to_document())))
    events = [*normal_session(MONDAY_10), ActionEvent("a1", "delete_repository", MONDAY_10 + timedelta(seconds=30))]
    a, b = primed(model), primed(copy)
    assert [a.score(e) for e in events] == [b.score(e) for e in events]


def test_fit_is_deterministic_whatever_the_order() -> None:
    events = history()
    shuffled = events[:]
    random.Random(7).shuffle(shuffled)
    assert json.dumps(fit(events).to_document(), sort_keys=True) == json.dumps(
        fit(shuffled).to_document(), sort_keys=True
    )


@pytest.mark.parametrize(
    "doc",
    [
        None,
        {},
        {"format": "other"},
        {"format": "agentgov.anomaly/1"},
        {"format": "agentgov.anomaly/1", "agents": 3, "threshold": 0.5, "params": {}, "metrics": {}},
        "x",
    ],
)
def test_from_document_rejects_garbage(doc) -> None:
    with pytest.raises(ModelFormatError):
        AnomalyModel.from_document(doc)


def test_too_little_history_is_refused() -> None:
    with pytest.raises(NotEnoughHistory, match="30 events"):
        fit(history()[:10])


def test_with_threshold_and_params_validation(model: AnomalyModel) -> None:
    assert model.with_threshold(0.9).threshold == 0.9
    with pytest.raises(ValueError):
        model.with_threshold(1.5)
    with pytest.raises(ValueError):
        AnomalyParams(target_alert_rate=0.9)
    with pytest.raises(ValueError, match="unknown"):
        AnomalyParams.from_dict({"nope": 1})


def test_combinations() -> None:
    assert truncated_product([]) == 1.0 and tippett([]) == 1.0
    assert tippett([0.01, 0.9]) == pytest.approx(1 - 0.99**2)
    assert truncated_product([0.5, 0.9, 0.2]) == 1.0  # nothing at most tau
    assert truncated_product([0.01]) == pytest.approx(0.01)  # one p-value is its own combination
    assert truncated_product([0.01, 0.01, 0.9]) < 0.01 < truncated_product([0.01, 0.9, 0.9])


def test_the_truncated_product_is_a_p_value() -> None:
    """Under independent uniform p-values, P(combined <= a) is about a."""
    rng = random.Random(11)
    combined = [truncated_product([rng.random() for _ in range(6)]) for _ in range(20_000)]
    for alpha in (0.01, 0.05, 0.2):
        share = sum(1 for c in combined if c <= alpha) / len(combined)
        assert alpha * 0.8 < share < alpha * 1.2, (alpha, share)


def test_each_agent_learns_the_silence_between_its_sessions() -> None:
    """Calls 3-15 s apart, sessions hours apart: the learnt gap lies between the two, below the maximum."""
    events = sorted(history(), key=lambda e: e.timestamp)
    gap = learn_session_gap(events, 900.0)
    assert 15.0 < gap <= 900.0
    steady = [ActionEvent("a1", "poll", MONDAY_10 + timedelta(seconds=5 * i)) for i in range(50)]
    assert learn_session_gap(steady, 900.0) == 30.0  # one mode only: the floor, never inside the calls
    assert learn_session_gap(steady[:5], 600.0) == 600.0  # too few gaps to learn from
    assert fit(history()).to_document()["agents"]["a1"]["profile"]["session_gap"] == pytest.approx(gap)


def task_history(agent: str = "a2", days: int = 14, seed: int = 3) -> list[ActionEvent]:
    """Two tasks that open alike but for their query: a report (search, read, summarise) and a mail task
    (search, read, send_email). Either tool is ordinary after read_file; only the task tells them apart."""
    rng = random.Random(seed)
    events = []
    start = datetime(2026, 5, 4, tzinfo=UTC)
    for day in range(days):
        date = start + timedelta(days=day)
        if date.weekday() >= 5:
            continue
        for session in range(6):
            at = date + timedelta(hours=9 + session, minutes=rng.randint(0, 40))
            query, last = rng.choice([("quarterly report", "summarise"), ("customer mail", "send_email")])
            for tool, data in (("search_files", {"query": query}), ("read_file", {"path": query}), (last, {})):
                at += timedelta(seconds=rng.uniform(3, 15))
                events.append(ActionEvent(agent, tool, at, input=data))
    return events


def test_a_step_foreign_to_the_task_in_hand_is_flagged() -> None:
    """send_email after read_file is half of the agent's sessions, but never in the report task."""
    model = fit(task_history())

    def last_step(query: str, last: str) -> AnomalyScore:
        scorer = model.scorer()
        for event in task_history():
            scorer.observe(event)
        steps = [("search_files", {"query": query}), ("read_file", {"path": query}), (last, {})]
        verdicts = [
            scorer.score(ActionEvent("a2", tool, MONDAY_10 + timedelta(seconds=9 * i), input=data))
            for i, (tool, data) in enumerate(steps)
        ]
        return verdicts[-1]

    usual = last_step("customer mail", "send_email")
    foreign = last_step("quarterly report", "send_email")
    assert foreign.components["context"] < 0.05 < usual.components["context"]
    assert foreign.score > usual.score
    assert not usual.is_anomaly
    assert "tool send_email unusual in sessions like this one (same tools and arguments so far)" in foreign.reasons


def test_a_new_value_weighs_more_where_values_repeat() -> None:
    """The recipient is one of two accounts every time, the subject is new every time: a new recipient is
    far more surprising than a new subject."""
    rng = random.Random(5)
    events = []
    at = datetime(2026, 5, 4, 9, tzinfo=UTC)
    for i in range(120):
        at += timedelta(minutes=30 if i % 3 == 0 else 0, seconds=rng.uniform(3, 15))
        data = {"recipient": rng.choice(["GB01", "GB02"]), "subject": f"invoice {i}"}
        events.append(ActionEvent("a3", "send_money", at, input=data))
    model = fit(events)
    profile = model._agents["a3"].profile
    context = Context()
    later = at + timedelta(days=1)

    def arguments(recipient: str, subject: str) -> float:
        event = ActionEvent("a3", "send_money", later, input={"recipient": recipient, "subject": subject})
        return profile.surprises(event, context)["arguments"]

    assert arguments("GB01", "invoice 7") == 0.0
    new_subject, new_recipient = arguments("GB01", "lunch"), arguments("US99", "invoice 7")
    assert 0.0 < new_subject < 0.1 < 3.0 < new_recipient


def test_a_fork_scores_a_batch_without_touching_its_parent_until_adopted(model: AnomalyModel) -> None:
    parent = primed(model)
    reference = primed(model)
    session = normal_session(MONDAY_10)
    fork = parent.fork()
    forked = [fork.score(e) for e in session]
    # The parent has not seen the session: scoring its first step there matches a fresh reference.
    assert parent.score(session[0], remember=False) == reference.score(session[0], remember=False)
    parent.adopt(fork)
    follow = ActionEvent("a1", "search_files", MONDAY_10 + timedelta(seconds=30), resource="res:search_files")
    expected = [reference.score(e) for e in session]
    assert [v.score for v in forked] == [v.score for v in expected]
    assert parent.score(follow) == reference.score(follow)


def test_a_session_that_left_the_usual_paths_stays_suspect(model: AnomalyModel) -> None:
    """After an out-of-place step, the session's next ordinary step carries the earlier evidence."""

    def last_verdict(tools: list[str]) -> AnomalyScore:
        scorer = primed(model)
        verdicts = [
            scorer.score(ActionEvent("a1", tool, MONDAY_10 + timedelta(seconds=8 * i), resource=f"res:{tool}"))
            for i, tool in enumerate(tools)
        ]
        return verdicts[-1]

    usual = last_verdict(["search_files", "read_file", "summarise"])
    after_detour = last_verdict(["search_files", "list_invoices", "summarise"])
    assert after_detour.components["session"] < 0.05 < usual.components["session"]
    assert after_detour.score > usual.score


def test_each_agent_keeps_only_its_most_recent_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    everything = fit(history()).to_document()["agents"]["a1"]["profile"]["sessions"]
    monkeypatch.setattr("agentgov.ml.anomaly.profile.MAX_SESSIONS", 10)
    bounded = fit(history()).to_document()["agents"]["a1"]["profile"]["sessions"]
    assert len(everything) > 10 and bounded == everything[-10:]


def test_the_session_index_forgets_its_oldest_session() -> None:
    index = SessionIndex([["t:search", "t:send"], ["t:search", "t:read"], ["t:list"]])
    assert index.support(frozenset({"t:search"}), "send") == (1.0, 2.0)
    index.evict_oldest()
    assert len(index) == 2
    assert index.support(frozenset({"t:search"}), "send") == (0.0, 1.0)
    index.add(["t:search", "t:send"])
    assert index.support(frozenset({"t:search"}), "send") == (1.0, 2.0)
    for _ in range(5):
        index.evict_oldest()
    assert len(index) == 0 and index.support(frozenset({"t:search"}), "send") is None


def test_values_that_come_from_nowhere_in_the_session_are_flagged_and_named() -> None:
    """The agent always pays an account it has just read from an invoice (a different one each time, so the
    value itself is always new); paying an account found nowhere in the session is what an injected instruction
    does, and it is named."""
    rng = random.Random(9)
    events = []
    at = datetime(2026, 5, 4, 9, tzinfo=UTC)
    for i in range(80):
        at += timedelta(minutes=40, seconds=rng.uniform(0, 30))
        account = f"GB{rng.randint(10**8, 10**9)}"
        events.append(ActionEvent("a5", "read_invoice", at, input={"id": f"inv-{i}"}, output={"iban": account}))
        paid = at + timedelta(seconds=rng.uniform(4, 14))
        events.append(ActionEvent("a5", "send_money", paid, input={"recipient": account}))
    model = fit(events)
    later = at + timedelta(days=1)

    def pay(read: str, paid: str) -> AnomalyScore:
        scorer = model.scorer()
        for event in events:
            scorer.observe(event)
        scorer.score(ActionEvent("a5", "read_invoice", later, input={"id": "inv-x"}, output={"iban": read}))
        return scorer.score(ActionEvent("a5", "send_money", later + timedelta(seconds=8), input={"recipient": paid}))

    passed_on = pay("GB123456789", "GB123456789")
    injected = pay("GB123456789", "US999999999")
    assert passed_on.components["provenance"] > 0.5 > 0.05 > injected.components["provenance"]
    assert injected.is_anomaly and not passed_on.is_anomaly
    assert any(
        r.startswith("values of send_money found nowhere earlier in the session: recipient=US999999999")
        for r in injected.reasons
    ), injected.reasons
    assert "provenance" not in model.scorer().score(events[0]).components  # a session's first call: nothing to trace
