"""`SessionModel` is one flat dataclass: its concept classes add behaviour, never a field.

Continue-as-new carries the model as a payload (`SessionStartInput.carried`) whose keys are
`SessionFields`' field names, so a field declared on a concept class, or nested in one,
would change a recorded format.
"""

from __future__ import annotations

import dataclasses
import inspect

from sessionflow import AgentEventType
from sessionflow.session.model import SessionModel
from sessionflow.session.model_fields import SessionFields


def test_the_concept_classes_add_no_field() -> None:
    concepts = [c for c in SessionModel.__mro__ if issubclass(c, SessionFields) and c is not SessionFields]
    assert len(concepts) > 1
    for concept in concepts:
        assert inspect.get_annotations(concept) == {}, concept
    assert dataclasses.fields(SessionModel) == dataclasses.fields(SessionFields)


def test_the_model_is_built_from_its_flat_fields() -> None:
    model = SessionModel(run_state="s", turn_continues=2)
    assert dataclasses.is_dataclass(model)
    assert dataclasses.asdict(model) == dataclasses.asdict(SessionFields(run_state="s", turn_continues=2))
    assert repr(model).startswith("SessionModel(")


def test_an_event_names_its_turn_and_its_step() -> None:
    model = SessionModel()
    outside = model.emit(AgentEventType.USAGE_RECORDED, {"n": 1})
    assert (outside.turn_id, outside.step_execution_id, outside.attempt) == ("", "/turn", 1)
    model.begin_turn()
    in_turn = model.emit(AgentEventType.USAGE_RECORDED, {"n": 2})
    assert (in_turn.turn_id, in_turn.step_execution_id, in_turn.attempt) == ("turn-1", "turn-1/turn", 1)
    model.model_step = "turn-1/model/1"
    in_step = model.emit(AgentEventType.USAGE_RECORDED, {"n": 3})
    assert (in_step.turn_id, in_step.step_execution_id) == ("turn-1", "turn-1/model/1")
    named = model.emit(AgentEventType.USAGE_RECORDED, {"n": 4}, step="turn-1/tool/c1")
    assert (named.turn_id, named.step_execution_id, named.data) == ("turn-1", "turn-1/tool/c1", {"n": 4})
