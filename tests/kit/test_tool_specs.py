"""Framework-neutral tools (`ToolSpec`): effects from MCP hints, what a handler may return, verify."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy
from sessionflow.kit import (
    ToolHandler,
    ToolInvocation,
    ToolOutput,
    ToolSpec,
    ToolVerifier,
    ToolVerifyBasis,
    effect_from_mcp_annotations,
    merge_tool_policies,
)
from sessionflow.session.tools import ToolExecutionError
from sessionflow.session.verify import EffectUnknown, NoEffect, TookEffect, VerifyCall

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
INVOCATION = ToolInvocation(tool_call_id="c", idempotency_key="s/turn-1/c", attempt=1)
VERIFY = VerifyCall(tool_call_id="c", idempotency_key="s/turn-1/c", attempt=1)


def spec(
    name: str = "t",
    *,
    parameters: Mapping[str, Any] = OBJECT,
    effect: ToolEffect | None = None,
    policy: ToolPolicy | None = None,
    handler: ToolHandler | None = None,
    mcp_annotations: Mapping[str, Any] | None = None,
    needs_approval: bool | Callable[[Mapping[str, Any]], bool] = False,
    pre_approved: bool = False,
    question: Callable[[Mapping[str, Any]], str] | None = None,
    verify: ToolVerifier | None = None,
    verify_basis: ToolVerifyBasis | None = None,
) -> ToolSpec:
    return ToolSpec(
        name=name,
        description="d",
        parameters=parameters,
        effect=effect,
        policy=policy,
        handler=handler or _ok,
        mcp_annotations=mcp_annotations,
        needs_approval=needs_approval,
        pre_approved=pre_approved,
        question=question,
        verify=verify,
        verify_basis=verify_basis,
    )


def _ok(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
    return "ok"


@pytest.mark.parametrize(
    ("annotations", "effect"),
    [
        (None, None),
        ({}, None),
        ({"readOnlyHint": True}, ToolEffect.READ),
        ({"readOnlyHint": True, "idempotentHint": True}, ToolEffect.READ),
        ({"readOnlyHint": "true"}, None),
        ({"readOnlyHint": 1}, None),
        ({"readOnlyHint": False, "idempotentHint": True}, ToolEffect.IDEMPOTENT_WRITE),
        ({"idempotentHint": 1}, None),
        ({"destructiveHint": False}, None),
    ],
)
def test_only_a_literal_true_hint_promises_an_effect(annotations: Any, effect: ToolEffect | None) -> None:
    assert effect_from_mcp_annotations(annotations) is effect


def test_the_framework_effect_is_the_effect_else_the_hint() -> None:
    hinted = {"readOnlyHint": True}
    assert spec(effect=ToolEffect.NON_IDEMPOTENT_WRITE, mcp_annotations=hinted).framework_effect is (
        ToolEffect.NON_IDEMPOTENT_WRITE
    )
    assert spec(mcp_annotations=hinted).framework_effect is ToolEffect.READ
    assert spec().framework_effect is None


def test_a_spec_needs_a_name_and_an_object_schema() -> None:
    with pytest.raises(ValueError, match="tool name must not be empty"):
        spec(name="  ")
    with pytest.raises(
        ValueError, match="parameters must be a JSON schema with type 'object', got type 'array'"
    ):
        spec(parameters={"type": "array"})


def test_call_returns_text_from_a_sync_or_async_handler() -> None:
    async def handler(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        return f"{arguments['x']} {invocation.tool_call_id}"

    assert asyncio.run(spec(handler=handler).call({"x": 1}, INVOCATION)) == "1 c"
    assert asyncio.run(spec().call({}, INVOCATION)) == "ok"


def test_call_keeps_a_tool_output_without_update_and_refuses_one_with_an_update() -> None:
    plain = spec(handler=lambda a, i: ToolOutput(text="done"))
    assert asyncio.run(plain.call({}, INVOCATION)) == "done"
    updating = spec(handler=lambda a, i: ToolOutput(text="done", state_update={"k": 1}))
    with pytest.raises(TypeError, match="returned a state update"):
        asyncio.run(updating.call({}, INVOCATION))
    output = asyncio.run(updating.call_output({}, INVOCATION))
    assert (output.text, dict(output.state_update)) == ("done", {"k": 1})


def test_a_handler_that_returns_no_text_is_refused() -> None:
    with pytest.raises(TypeError, match="tool 't' returned int, expected str"):
        asyncio.run(spec(handler=lambda a, i: 3).call({}, INVOCATION))  # pyright: ignore[reportArgumentType]  (a plugin's wrong type, on purpose)
    with pytest.raises(TypeError, match="returned NoneType, expected str"):
        asyncio.run(spec(handler=lambda a, i: ToolOutput(text=None)).call_output({}, INVOCATION))  # type: ignore[arg-type]


def test_run_verify_without_verify_is_unknown_and_checks_the_answer() -> None:
    assert asyncio.run(spec().run_verify({}, VERIFY)) == EffectUnknown(reason="tool 't' has no verify")

    async def took(arguments: dict[str, Any], call: VerifyCall) -> TookEffect:
        return TookEffect(output=call.idempotency_key)

    assert asyncio.run(spec(verify=took).run_verify({}, VERIFY)) == TookEffect(output="s/turn-1/c")
    assert asyncio.run(spec(verify=lambda a, c: NoEffect(message="no")).run_verify({}, VERIFY)) == NoEffect(
        message="no"
    )
    with pytest.raises(TypeError, match="verify returned str, expected a VerifyResult"):
        asyncio.run(spec(verify=lambda a, c: "yes").run_verify({}, VERIFY))  # pyright: ignore[reportArgumentType]  (a plugin's wrong type, on purpose)


def test_the_deferral_basis_needs_both_verify_and_a_basis() -> None:
    verify: ToolVerifier = lambda a, c: NoEffect(message="no")  # noqa: E731
    assert asyncio.run(spec(verify_basis=lambda a: "b").deferral_basis({})) is None
    assert asyncio.run(spec(verify=verify).deferral_basis({})) is None
    assert (
        asyncio.run(spec(verify=verify, verify_basis=lambda a: f"b={a['x']}").deferral_basis({"x": 2}))
        == "b=2"
    )

    async def later(arguments: dict[str, Any]) -> str | None:
        return None

    assert asyncio.run(spec(verify=verify, verify_basis=later).deferral_basis({})) is None


def test_a_basis_that_cannot_be_taken_records_nothing_and_a_wrong_type_is_refused() -> None:
    verify: ToolVerifier = lambda a, c: NoEffect(message="no")  # noqa: E731

    def missing(arguments: dict[str, Any]) -> str:
        raise ToolExecutionError("the file is missing")

    assert asyncio.run(spec(verify=verify, verify_basis=missing).deferral_basis({})) is None
    with pytest.raises(TypeError, match="verify_basis returned int, expected str"):
        asyncio.run(spec(verify=verify, verify_basis=lambda a: 5).deferral_basis({}))  # pyright: ignore[reportArgumentType]  (a plugin's wrong type, on purpose)


def test_merge_adds_spec_policies_the_options_do_not_name_and_the_first_spec_wins() -> None:
    read, write = ToolPolicy(effect=ToolEffect.READ), ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)
    options = AgentSessionOptions(tool_policies={"a": write})
    merged = merge_tool_policies(
        options, [spec("a", policy=read), spec("b", policy=read), spec("b", policy=write), spec("c")]
    )
    assert dict(merged.tool_policies) == {"a": write, "b": read}
    assert dict(options.tool_policies) == {"a": write}
    assert merge_tool_policies(options, [spec("c"), spec("a", policy=read)]) is options


def test_specs_and_outputs_are_immutable_and_keyword_only() -> None:
    # A spec is shared by every run of a flow and handed to every adapter as it is.
    tool = spec()
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "other"  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(TypeError):
        ToolSpec("t", "d", OBJECT, None, None, _ok)  # pyright: ignore[reportCallIssue]
    output = ToolOutput(text="done")
    assert output.state_update == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        output.text = "other"  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(TypeError):
        ToolOutput("done")  # pyright: ignore[reportCallIssue]
