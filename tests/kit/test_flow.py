"""A flow type (`AgentSessionFlow`): its name rules, options and the model it reports."""

from __future__ import annotations

from typing import Any

import pytest

from sessionflow import AgentSessionFlow, AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.kit import FlowArguments, ToolInvocation, ToolSpec
from tests.plugins.helpers import EchoRunner

READ = ToolPolicy(effect=ToolEffect.READ)


class Named(EchoRunner):
    def __init__(self, **attributes: Any) -> None:
        super().__init__()
        for name, value in attributes.items():
            setattr(self, name, value)


def _ok(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
    return "ok"


def test_the_model_name_is_the_first_non_empty_string_of_model_name_then_model() -> None:
    assert AgentSessionFlow(Named(model_name="m1", model="m2"), flow_type="f").model_name == "m1"
    assert AgentSessionFlow(Named(model_name="", model="m2"), flow_type="f").model_name == "m2"
    assert AgentSessionFlow(Named(model_name=3, model="m2"), flow_type="f").model_name == "m2"
    assert AgentSessionFlow(Named(model=object()), flow_type="f").model_name is None
    assert AgentSessionFlow(Named(), flow_type="f").model_name is None


def test_options_default_and_take_the_tool_specs_policies() -> None:
    spec = ToolSpec(
        name="look", description="d", parameters={"type": "object"}, effect=None, policy=READ, handler=_ok
    )
    flow = AgentSessionFlow(EchoRunner(), flow_type="f", tool_specs=[spec])
    assert dict(flow.options.tool_policies) == {"look": READ}
    given = AgentSessionOptions(tool_policies={"other": READ})
    kept = AgentSessionFlow(EchoRunner(), flow_type="f", options=given)
    assert kept.options is given
    assert (kept.task_queue, kept.flow_type) == ("f", "f")


def test_flow_arguments_after_the_runner_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        AgentSessionFlow(EchoRunner(), "f")  # type: ignore[misc]


def test_every_flow_argument_is_optional() -> None:
    # A builder passes on what its caller gave (`**flow_args: Unpack[FlowArguments]`):
    # no argument may be required of the caller.
    assert FlowArguments.__required_keys__ == frozenset()
    assert FlowArguments.__optional_keys__ == frozenset(FlowArguments.__annotations__)
