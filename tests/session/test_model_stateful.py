"""A rule-based state machine driving SessionModel through random legal and illegal steps."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from sessionflow import (
    AgentStatus,
    AgentToolCallStatus,
    AgentUsage,
    SessionStateError,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.kit import (
    DeferredToolCall,
    InvalidToolCallError,
    ToolCallsRequested,
    TurnCompleted,
    build_turn_failure_note,
    message_digest,
)
from sessionflow.session.model import SessionModel
from sessionflow.session.queued_message import QueuedUserMessage
from sessionflow.session.tools import LEGAL_STATUS_MOVES
from tests.session.helpers import NOW, assistant, user

S = AgentToolCallStatus
# Mostly fresh, valid IDs; now and then a blank one, one with '/', or a repeat.
id_kinds = st.sampled_from(["fresh"] * 6 + ["blank", "slash", "repeat"])
policies = st.builds(
    ToolPolicy, effect=st.sampled_from(list(ToolEffect)), requires_approval=st.none() | st.booleans()
)
deadlines = st.none() | st.integers(min_value=1, max_value=120).map(lambda s: timedelta(seconds=s))
usages = st.builds(
    AgentUsage,
    requests=st.integers(min_value=0, max_value=3),
    input_tokens=st.integers(min_value=0, max_value=100),
    output_tokens=st.integers(min_value=0, max_value=100),
)


def _ids_valid(ids: list[str], earlier: list[str]) -> bool:
    if any(not i.strip() or "/" in i for i in ids):
        return False
    return len(set(ids)) == len(ids) and not set(ids) & set(earlier)


class SessionMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.model = SessionModel()
        self.now = NOW
        self.max_requests = 0
        self.turns_begun = 0
        self.id_counter = 0

    # -- helpers -------------------------------------------------------------------------

    def _turn_active(self) -> bool:
        return self.model.turn_active

    def _has_interrupts(self) -> bool:
        return bool(self.model.pending_interrupts)

    def _has(self, *statuses: AgentToolCallStatus) -> bool:
        return any(r.status in statuses for r in self.model.tool_calls.values())

    def _ids_with(self, *statuses: AgentToolCallStatus) -> list[str]:
        return sorted(k for k, r in self.model.tool_calls.items() if r.status in statuses)

    def _request(
        self,
        kinds: list[str],
        call_policies: list[ToolPolicy],
        run_state: str,
        deadline: timedelta | None,
        usage: AgentUsage,
    ) -> None:
        earlier_ids = list(self.model.tool_calls)
        ids: list[str] = []
        for kind in kinds:
            self.id_counter += 1
            if kind == "fresh":
                ids.append(f"call_{self.id_counter}")
            elif kind == "blank":
                ids.append(" " * (self.id_counter % 3))
            elif kind == "slash":
                ids.append(f"call/{self.id_counter}")
            else:
                ids.append(([*earlier_ids, *ids] or ["call_0"])[-1])
        calls = [
            DeferredToolCall(tool_call_id=i, tool_name=f"tool_{n}", arguments="{}", policy=p)
            for n, (i, p) in enumerate(zip(ids, call_policies, strict=False))
        ]
        earlier = list(self.model.tool_calls)
        all_final = self.model.tools_final()
        before = copy.deepcopy(self.model)
        outcome = ToolCallsRequested(framework_run_state=run_state, tool_calls=calls, usage=usage)
        expected_error: type[Exception] | None = None
        if not run_state or not calls:
            expected_error = SessionStateError
        elif not _ids_valid(ids, earlier):
            expected_error = InvalidToolCallError
        elif not all_final:
            expected_error = SessionStateError
        try:
            created = self.model.request_tools(outcome, now=self.now, deadline=deadline)
        except (SessionStateError, InvalidToolCallError) as error:
            assert type(error) is expected_error, (error, expected_error)
            assert self.model == before, "a refused request changed the model"
            return
        assert expected_error is None
        assert [r.deferral_order for r in created] == list(
            range(len(earlier) + 1, len(earlier) + len(calls) + 1)
        )
        for record, policy in zip(created, call_policies, strict=False):
            expected = S.AWAITING_APPROVAL if policy.is_approval_required else S.PENDING
            assert record.status is expected
            interrupt = self.model.find_interrupt(f"{self.model.state.turn_id}:{record.tool_call_id}")
            assert (interrupt is not None) is policy.is_approval_required
            if interrupt is not None:
                assert interrupt.deadline == ((self.now + deadline).isoformat() if deadline else None)
        assert self.model.run_state == run_state
        assert self.model.state.status is AgentStatus.RUNNING_TOOLS

    # -- rules ---------------------------------------------------------------------------

    @precondition(lambda self: len(self.model.queued) < 2)
    @rule(text=st.text(alphabet="ab \t\n", max_size=4))
    def queue_message(self, text: str) -> None:
        before = list(self.model.queued)
        accepted = self.model.queue_user_message(QueuedUserMessage(text=text))
        assert accepted is bool(text.strip())
        assert self.model.queued == ([*before, QueuedUserMessage(text=text)] if accepted else before)

    @precondition(lambda self: not self._turn_active())
    @rule()
    def begin_turn(self) -> None:
        sequence = self.model.next_sequence
        turn_id = self.model.begin_turn()
        self.turns_begun += 1
        assert turn_id == f"turn-{self.turns_begun}"
        text = self.model.next_queued().text if self.model.queued else "hello"
        stored = self.model.store_user_message(user(text))
        assert (stored.sequence, stored.turn_id) == (sequence, turn_id)

    @precondition(lambda self: self._turn_active() and self.model.tools_final())
    @rule(
        kinds=st.lists(id_kinds, min_size=1, max_size=3),
        call_policies=st.lists(policies, min_size=3, max_size=3),
        run_state=st.sampled_from(["rs"] * 6 + [""]),
        deadline=deadlines,
        usage=usages,
    )
    def request_tools(
        self,
        kinds: list[str],
        call_policies: list[ToolPolicy],
        run_state: str,
        deadline: timedelta | None,
        usage: AgentUsage,
    ) -> None:
        self._request(kinds, call_policies, run_state, deadline, usage)

    @precondition(lambda self: self._turn_active() and not self.model.tools_final())
    @rule(
        kinds=st.lists(id_kinds, min_size=0, max_size=3),
        call_policies=st.lists(policies, min_size=3, max_size=3),
        run_state=st.sampled_from(["rs", ""]),
        deadline=deadlines,
        usage=usages,
    )
    def request_tools_while_busy(
        self,
        kinds: list[str],
        call_policies: list[ToolPolicy],
        run_state: str,
        deadline: timedelta | None,
        usage: AgentUsage,
    ) -> None:
        self._request(kinds, call_policies, run_state, deadline, usage)

    @precondition(lambda self: self._has_interrupts())
    @rule(seconds=st.integers(min_value=0, max_value=90))
    def advance_clock(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)

    @precondition(lambda self: any(i.deadline for i in self.model.pending_interrupts))
    @rule(data=st.data(), offset=st.sampled_from([-1, 0, 1]))
    def jump_to_a_deadline(self, data: st.DataObject, offset: int) -> None:
        """Move the clock to a microsecond around a pending deadline (never backwards)."""
        deadlines = sorted(i.deadline for i in self.model.pending_interrupts if i.deadline)
        deadline = datetime.fromisoformat(data.draw(st.sampled_from(deadlines)))
        self.now = max(self.now, deadline + timedelta(microseconds=offset))

    @precondition(lambda self: self._has_interrupts())
    @rule(data=st.data(), approved=st.booleans(), message=st.none() | st.sampled_from(["", "  ", " no "]))
    def resolve_interrupt(self, data: st.DataObject, approved: bool, message: str | None) -> None:
        interrupt = data.draw(st.sampled_from(self.model.pending_interrupts))
        open_ = self.model.can_resolve(interrupt.interrupt_id, self.now)
        assert open_ is (interrupt.deadline is None or self.now.isoformat() < interrupt.deadline)
        before = copy.deepcopy(self.model)
        try:
            updated = self.model.resolve_interrupt(
                interrupt.interrupt_id, approved=approved, rejection_message=message, now=self.now
            )
        except SessionStateError:
            assert not open_
            assert self.model == before
            return
        assert open_
        if approved:
            assert (updated.status, updated.rejection_message) == (S.APPROVED, None)
        else:
            assert (updated.status, updated.rejection_message) == (
                S.REJECTED,
                "no" if message == " no " else None,
            )
        assert self.model.find_interrupt(interrupt.interrupt_id) is None
        # Exactly once: the deadline timer now finds nothing to do.
        assert self.model.expire_interrupt(interrupt.interrupt_id) is None
        assert self.model.tool_calls[updated.tool_call_id] == updated

    @precondition(lambda self: self._has_interrupts())
    @rule(data=st.data())
    def expire_interrupt(self, data: st.DataObject) -> None:
        known = [i.interrupt_id for i in self.model.pending_interrupts]
        interrupt_id = data.draw(st.sampled_from([*known, f"{self.model.state.turn_id}:gone"]))
        expired = self.model.expire_interrupt(interrupt_id)
        if interrupt_id not in known:
            assert expired is None
            return
        assert expired is not None
        assert expired.status is S.REJECTED
        assert not self.model.can_resolve(interrupt_id, self.now)
        assert self.model.expire_interrupt(interrupt_id) is None

    @precondition(lambda self: self._has(S.PENDING, S.APPROVED))
    @rule(data=st.data())
    def start_call(self, data: st.DataObject) -> None:
        tool_call_id = data.draw(st.sampled_from(self._ids_with(S.PENDING, S.APPROVED)))
        assert self.model.move_tool_call(tool_call_id, S.RUNNING).status is S.RUNNING

    @precondition(lambda self: self._has(S.RUNNING))
    @rule(data=st.data(), final=st.sampled_from([S.SUCCEEDED, S.FAILED, S.OUTCOME_UNKNOWN]))
    def finish_call(self, data: st.DataObject, final: AgentToolCallStatus) -> None:
        tool_call_id = data.draw(st.sampled_from(self._ids_with(S.RUNNING)))
        updated = self.model.move_tool_call(tool_call_id, final, output="out", error="err")
        assert updated.status is final

    @precondition(lambda self: self._has(*S))
    @rule(data=st.data(), to_status=st.sampled_from(list(S)))
    def attempt_any_move(self, data: st.DataObject, to_status: AgentToolCallStatus) -> None:
        """Illegal moves are refused and leave the record as it was."""
        record = self.model.tool_calls[data.draw(st.sampled_from(sorted(self.model.tool_calls)))]
        if record.status is S.AWAITING_APPROVAL and to_status in (S.APPROVED, S.REJECTED):
            return  # answers go through the interrupt, not a direct move
        if record.status is S.RUNNING and to_status is S.AWAITING_APPROVAL:
            return  # a rewrite asks again through rebind_approval, which raises its interrupt
        legal = to_status in LEGAL_STATUS_MOVES[record.status]
        try:
            updated = self.model.move_tool_call(record.tool_call_id, to_status)
        except SessionStateError:
            assert not legal
            assert self.model.tool_calls[record.tool_call_id] == record
            return
        assert legal
        assert not record.is_final
        assert updated.status is to_status

    @precondition(lambda self: self.model.state.status is AgentStatus.RUNNING_TOOLS)
    @rule()
    def resume_model(self) -> None:
        final = self.model.tools_final()
        try:
            self.model.resume_model()
        except SessionStateError:
            assert not final
            return
        assert final
        assert self.model.state.status is AgentStatus.RUNNING_MODEL

    @precondition(lambda self: self._turn_active())
    @rule(
        how=st.sampled_from(["complete", "fail", "cancel"]),
        count=st.integers(min_value=0, max_value=3),
        usage=usages,
    )
    def end_turn(self, how: str, count: int, usage: AgentUsage) -> None:
        """One rule for every way a turn ends, so turns tend to live long enough to do things."""
        if how == "complete":
            self._complete_turn(count, usage)
        else:
            self._fail_turn(cancelled=how == "cancel")

    def _complete_turn(self, count: int, usage: AgentUsage) -> None:
        before_count, before_usage = len(self.model.messages), self.model.usage
        turn_id = self.model.state.turn_id
        new = [assistant(f"m{n}") for n in range(count)]
        self.model.complete_turn(TurnCompleted(new_messages=new, usage=usage))
        assert [m.message for m in self.model.messages[before_count:]] == new
        assert all(m.turn_id == turn_id for m in self.model.messages[before_count:])
        assert self.model.usage == before_usage + usage
        assert self.model.state.last_turn_error is None

    def _fail_turn(self, *, cancelled: bool) -> None:
        """Fail the turn the way the workflow does: settle unstarted calls, then leave a note."""
        if cancelled:
            self.model.reject_pending_interrupts("cancelled")
            assert not self.model.pending_interrupts
        self.model.abandon_unstarted_calls("cancelled")
        assert not self._has(S.PENDING, S.APPROVED, S.AWAITING_APPROVAL)
        assert not self.model.pending_interrupts
        finals = [r for r in self.model.tool_calls.values() if r.is_final]
        text = build_turn_failure_note(self.model.tool_calls.values())
        assert (text is None) is (not finals)
        before_count = len(self.model.messages)
        self.model.fail_turn("boom", None if text is None else user(text))
        assert len(self.model.messages) == before_count + (0 if text is None else 1)
        assert self.model.state.last_turn_error == "boom"

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def sequences_are_dense_from_one(self) -> None:
        assert [m.sequence for m in self.model.messages] == list(range(1, len(self.model.messages) + 1))
        assert self.model.next_sequence == len(self.model.messages) + 1

    @invariant()
    def at_most_one_turn_is_active(self) -> None:
        state = self.model.state
        assert state.turn_count == self.turns_begun
        if state.turn_id is None:
            assert state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        else:
            assert state.turn_id == f"turn-{state.turn_count}"
            assert state.status is not AgentStatus.WAITING_FOR_USER_MESSAGE
        # Messages belong to turns that have begun, in turn order.
        numbers = [int(m.turn_id.removeprefix("turn-")) for m in self.model.messages]
        assert numbers == sorted(numbers)
        assert all(1 <= n <= state.turn_count for n in numbers)

    @invariant()
    def idle_sessions_hold_no_turn_state(self) -> None:
        if not self.model.turn_active:
            assert self.model.tool_calls == {}
            assert self.model.run_state is None
            assert self.model.pending_interrupts == []

    @invariant()
    def interrupts_match_awaiting_records(self) -> None:
        interrupts = self.model.pending_interrupts
        assert len({i.interrupt_id for i in interrupts}) == len(interrupts)
        for interrupt in interrupts:
            record = self.model.tool_calls[interrupt.tool_call_id]
            assert record.status is S.AWAITING_APPROVAL
            assert record.interrupt_id == interrupt.interrupt_id
            assert interrupt.turn_id == self.model.state.turn_id
        awaiting = {k for k, r in self.model.tool_calls.items() if r.status is S.AWAITING_APPROVAL}
        assert awaiting == {i.tool_call_id for i in interrupts}

    @invariant()
    def deferral_orders_are_dense(self) -> None:
        orders = sorted(r.deferral_order for r in self.model.tool_calls.values())
        assert orders == list(range(1, len(orders) + 1))

    @invariant()
    def requests_never_decrease(self) -> None:
        assert self.model.usage.requests >= self.max_requests
        self.max_requests = self.model.usage.requests

    @invariant()
    def digest_is_the_rolling_digest(self) -> None:
        digest = ""
        for message in self.model.messages:
            digest = message_digest(digest, message)
        assert self.model.digest == digest


def test_session_model_state_machine() -> None:
    run_state_machine_as_test(
        SessionMachine,
        settings=settings(
            max_examples=200,
            stateful_step_count=50,
            database=None,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
