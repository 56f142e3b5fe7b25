"""`SessionModel` is one flat dataclass: its concept classes add behaviour, never a field.

Continue-as-new carries the model as a payload (`SessionStartInput.carried`) whose keys are
`SessionFields`' field names, so a field declared on a concept class, or nested in one,
would change a recorded format.
"""

from __future__ import annotations

import dataclasses
import inspect

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
