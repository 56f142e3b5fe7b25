"""A framework's spec, capabilities and harness context: what a plugin may declare."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from sessionflow import AgentSessionOptions
from sessionflow.kit import (
    MODEL_APIS,
    AgentFrameworkRunner,
    FrameworkCapabilities,
    FrameworkSpec,
    HarnessContext,
    ModelApi,
)

CAPS = FrameworkCapabilities(
    parallel_tool_calls=True, reasoning_deltas=False, images=False, mcp_annotations=False
)


def build(context: HarnessContext) -> AgentFrameworkRunner:
    raise AssertionError("not built in these tests")


def framework(
    name: str = "demo",
    description: str = "A demo.",
    resume_texts: tuple[str, ...] = (),
    model_api: Any = "responses",
) -> FrameworkSpec:
    return FrameworkSpec(
        name=name,
        description=description,
        capabilities=CAPS,
        build_runner=build,
        model_api=model_api,
        resume_texts=resume_texts,
    )


def context(settings: dict[str, Any]) -> HarnessContext:
    return HarnessContext(
        flow_type="f",
        model="m",
        system_prompt=None,
        workspace=Path("."),
        options=AgentSessionOptions(),
        tools=[],
        settings=settings,
    )


def test_a_valid_spec_keeps_what_it_was_given() -> None:
    spec = framework(name="my-fw_2", resume_texts=("Continue.",), model_api="anthropic_messages")
    assert (spec.name, spec.resume_texts, spec.model_api) == ("my-fw_2", ("Continue.",), "anthropic_messages")
    api: ModelApi
    for api in MODEL_APIS:
        assert framework(model_api=api).model_api == api


@pytest.mark.parametrize("name", ["", "Demo", "2fw", "my fw", "fw!"])
def test_a_framework_name_must_be_lowercase_and_start_with_a_letter(name: str) -> None:
    with pytest.raises(ValueError, match="must match"):
        framework(name=name)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"description": "  "}, "description must not be empty"),
        ({"description": "two\nlines"}, "description must be one line"),
        ({"description": "two\rlines"}, "description must be one line"),
        ({"resume_texts": ("Continue.", " ")}, "resume_texts must not contain blank text"),
        (
            {"model_api": "grpc"},
            "model_api 'grpc' is not one of chat_completions, responses, anthropic_messages",
        ),
    ],
)
def test_a_bad_spec_is_refused_with_its_reason(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        framework(**changes)


def test_specs_capabilities_and_contexts_are_frozen_and_keyword_only() -> None:
    for value in (framework(), CAPS, context({})):
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.name = "x"  # type: ignore[misc,attr-defined]
    with pytest.raises(TypeError):
        FrameworkCapabilities(True, False, False, False)  # type: ignore[misc]
    with pytest.raises(TypeError):
        FrameworkSpec("demo", "A demo.", CAPS, build, "responses")  # type: ignore[misc]
    with pytest.raises(TypeError):
        HarnessContext("f", "m", None, Path("."), AgentSessionOptions(), [], {})  # type: ignore[misc]


def test_a_setting_of_the_wrong_type_or_empty_is_unset() -> None:
    settings = {"region": "eu", "empty": "", "port": 8080, "flag": False}
    ctx = context(settings)
    assert ctx.setting("region", str) == "eu"
    assert ctx.setting("empty", str) is None
    assert ctx.setting("port", str) is None
    assert ctx.setting("port", int) == 8080
    assert ctx.setting("flag", bool) is False
    assert ctx.setting("missing", str) is None


def test_a_table_setting_has_string_keys_and_anything_else_is_unset() -> None:
    ctx = context({"headers": {1: "a", "b": 2}, "region": "eu"})
    assert ctx.mapping_setting("headers") == {"1": "a", "b": 2}
    assert ctx.mapping_setting("region") is None
    assert ctx.mapping_setting("missing") is None
