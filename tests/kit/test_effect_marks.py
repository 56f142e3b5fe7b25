"""`sessionflow.effect` / `tool_effect`: one mark of a tool's effect, and the readers adapters use."""

from __future__ import annotations

import functools
import gc
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import pytest

import sessionflow
import sessionflow.kit
from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy, effect, tool_effect
from sessionflow.kit import (
    AgentEventWriter,
    AgentTurnContext,
    declared_effect,
    declared_policy,
)
from sessionflow.kit import _effect_marks as marks


def _function() -> Callable[[int], int]:
    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    return double


@dataclass(frozen=True)
class FrozenTool:
    name: str


class SlottedTool:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class Wrapping:
    """A framework object that says which function it wraps, as OpenAI's FunctionTool does."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.name = function.__name__
        self.__wrapped__ = function


def test_each_name_has_one_public_path() -> None:
    # Users declare at the top level; adapters read through the kit.
    assert sessionflow.effect is effect and sessionflow.tool_effect is tool_effect
    assert {"effect", "tool_effect"} <= set(sessionflow.__all__)
    assert not {"effect", "tool_effect"} & set(sessionflow.kit.__all__)
    assert {"declared_effect", "declared_policy"} <= set(sessionflow.kit.__all__)
    assert not {"declared_effect", "declared_policy"} & set(sessionflow.__all__)


def test_effect_returns_the_same_function_unchanged_and_marked() -> None:
    function = _function()
    marked = effect(function, "read")
    assert marked is function
    assert marked(4) == 8 and marked.__name__ == "double" and marked.__doc__ == "Double a number."
    assert declared_effect(function) is ToolEffect.READ
    assert declared_policy(function) is None


def test_an_unmarked_object_declares_nothing() -> None:
    assert declared_effect(_function()) is None
    assert declared_policy(_function()) is None
    assert declared_effect(object()) is None
    assert declared_effect(None) is None


def test_the_decorator_takes_a_member_or_its_value_and_a_whole_policy() -> None:
    policy = ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True)
    decorated = tool_effect(ToolEffect.IDEMPOTENT_WRITE, policy=policy)(_function())
    assert declared_effect(decorated) is ToolEffect.IDEMPOTENT_WRITE
    assert declared_policy(decorated) is policy
    assert (
        declared_effect(tool_effect("non_idempotent_write")(_function())) is ToolEffect.NON_IDEMPOTENT_WRITE
    )


def test_a_later_mark_replaces_an_earlier_one() -> None:
    function = effect(_function(), "read")
    effect(function, ToolEffect.UNCLASSIFIED)
    assert declared_effect(function) is ToolEffect.UNCLASSIFIED


def test_an_invalid_effect_names_the_tool_and_the_allowed_values() -> None:
    with pytest.raises(
        ValueError,
        match=r"tool 'double': effect 'rread' is not a tool effect; expected one of "
        r"'read', 'idempotent_write', 'non_idempotent_write', 'unclassified'",
    ):
        effect(_function(), "rread")
    with pytest.raises(ValueError, match=r"tool 'tidy': effect 'WRITE'"):
        effect(FrozenTool("tidy"), "WRITE")
    decorator = tool_effect("sometimes")
    with pytest.raises(ValueError, match=r"tool 'double': effect 'sometimes'"):
        decorator(_function())


def test_a_policy_must_be_a_tool_policy_of_the_same_effect() -> None:
    with pytest.raises(
        ValueError,
        match=r"tool 'double': the policy's effect 'read' is not the declared effect 'idempotent_write'",
    ):
        effect(_function(), "idempotent_write", policy=ToolPolicy(effect=ToolEffect.READ))
    with pytest.raises(TypeError, match=r"tool 'double': policy must be a ToolPolicy, got dict"):
        effect(_function(), "read", policy={"effect": "read"})  # pyright: ignore[reportArgumentType]


def test_an_invalid_mark_leaves_the_object_unmarked() -> None:
    function = _function()
    with pytest.raises(ValueError):
        effect(function, "nope")
    assert declared_effect(function) is None
    assert not hasattr(function, marks.EFFECT_MARK_ATTRIBUTE)


def test_objects_that_refuse_attributes_are_marked_in_the_registry() -> None:
    frozen = FrozenTool("lookup")
    slotted = SlottedTool("search")
    assert effect(frozen, "read") is frozen
    assert effect(slotted, "idempotent_write") is slotted
    assert declared_effect(frozen) is ToolEffect.READ
    assert declared_effect(slotted) is ToolEffect.IDEMPOTENT_WRITE
    # Nothing was added to the objects themselves.
    assert vars(frozen) == {"name": "lookup"}
    # An equal but distinct object is not marked: the registry goes by identity.
    assert declared_effect(FrozenTool("lookup")) is None


def test_a_registry_entry_goes_with_its_object() -> None:
    frozen = FrozenTool("gone")
    effect(frozen, "read")
    key = id(frozen)
    assert key in marks._registry  # pyright: ignore[reportPrivateUsage]
    del frozen
    gc.collect()
    assert key not in marks._registry  # pyright: ignore[reportPrivateUsage]


def test_a_mark_above_a_wrapping_framework_object_marks_the_function_too() -> None:
    function = _function()
    wrapper = Wrapping(function)
    effect(wrapper, "read")
    assert declared_effect(wrapper) is ToolEffect.READ
    assert declared_effect(function) is ToolEffect.READ


def test_a_mark_below_is_found_through_wrapped_functions() -> None:
    function = effect(_function(), "read", policy=ToolPolicy(effect=ToolEffect.READ, local_timeout=5))
    wrapper = Wrapping(function)
    assert declared_effect(wrapper) is ToolEffect.READ
    assert declared_policy(wrapper) == ToolPolicy(effect=ToolEffect.READ, local_timeout=5.0)

    @functools.wraps(function)
    def logged(x: int) -> int:
        return function(x)

    assert declared_effect(Wrapping(logged)) is ToolEffect.READ


def test_the_objects_own_mark_wins_over_the_function_it_wraps() -> None:
    function = effect(_function(), "read")
    wrapper = Wrapping(function)
    marks._store(wrapper, marks._EffectMark(ToolEffect.NON_IDEMPOTENT_WRITE, None))  # pyright: ignore[reportPrivateUsage]
    assert declared_effect(wrapper) is ToolEffect.NON_IDEMPOTENT_WRITE
    assert declared_effect(function) is ToolEffect.READ


def test_a_wrapped_attribute_that_raises_is_no_mark() -> None:
    class Refuses:
        name = "refuses"

        @property
        def __wrapped__(self) -> object:
            raise AttributeError("no wrapped callable")

    assert declared_effect(Refuses()) is None
    assert declared_effect(effect(Refuses(), "read")) is ToolEffect.READ


def _context(tool_policies: dict[str, ToolPolicy]) -> AgentTurnContext:
    options = AgentSessionOptions(tool_policies=tool_policies)
    return AgentTurnContext(
        flow_id="s",
        turn_id="turn-1",
        attempt=1,
        messages=[],
        framework_run_state=None,
        tool_calls={},
        policy_resolver=options.resolve_tool_policy,
        tool_policies=options.tool_policies,
        events=AgentEventWriter(None, turn_id="turn-1", step_execution_id="turn-1/model-1", attempt=1),
        heartbeat=lambda *args: None,
    )


def test_precedence_explicit_policy_then_declared_policy_then_effect_then_default() -> None:
    explicit = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
    declared = ToolPolicy(effect=ToolEffect.READ, local_timeout=2)
    context = _context({"mcp_send": explicit})
    # The session's name-keyed policy wins over what the tool declares.
    assert context.resolve_tool_policy("mcp_send", ToolEffect.READ, declared_policy=declared) is explicit
    # Then the tool's whole declared policy, over the effect alone.
    assert (
        context.resolve_tool_policy("lookup", ToolEffect.IDEMPOTENT_WRITE, declared_policy=declared)
        is declared
    )
    # Then the effect (a mark, framework metadata or MCP hints), then the default.
    assert context.resolve_tool_policy("lookup", ToolEffect.READ) == ToolPolicy(effect=ToolEffect.READ)
    assert context.resolve_tool_policy("lookup") == ToolPolicy(effect=ToolEffect.UNCLASSIFIED)


def test_a_bound_method_is_marked_through_its_function() -> None:
    class Service:
        def lookup(self, key: str) -> str:
            return key

    service = Service()
    assert effect(service.lookup, "read") == service.lookup
    assert declared_effect(service.lookup) is ToolEffect.READ
    assert declared_effect(Service().lookup) is ToolEffect.READ


def test_a_mark_that_fits_on_the_object_takes_no_registry_entry() -> None:
    function = _function()
    effect(function, "read")
    assert id(function) not in marks._registry  # pyright: ignore[reportPrivateUsage]


def test_a_tool_with_an_empty_name_is_named_by_its_repr() -> None:
    class Nameless:
        name = ""

        def __repr__(self) -> str:
            return "<nameless tool>"

    with pytest.raises(ValueError, match="tool '<nameless tool>'"):
        effect(Nameless(), "sideways")


def test_wrapped_links_are_followed_up_to_the_limit() -> None:
    def chain(links: int) -> object:
        inner: Callable[..., object] = _function()
        effect(inner, "read")
        for _ in range(links):
            outer = types.SimpleNamespace(__wrapped__=inner)
            inner = cast(Callable[..., object], outer)
        return inner

    # 16 objects are read in all: the marked function behind 15 wrappers, not behind 16.
    assert declared_effect(chain(15)) is ToolEffect.READ
    assert declared_effect(chain(16)) is None


class Opaque:
    """A framework object whose unknown attributes raise something other than AttributeError,
    as a proxy or a tool that wraps no Python callable may."""

    def __getattr__(self, name: str) -> object:
        raise RuntimeError(f"no {name} here")

    def __repr__(self) -> str:
        return "<opaque tool>"


def test_attributes_that_raise_are_read_as_absent() -> None:
    assert declared_effect(Opaque()) is None  # neither a mark nor a wrapped function
    assert declared_policy(Opaque()) is None
    with pytest.raises(ValueError, match="tool '<opaque tool>': effect 'sideways'"):
        effect(Opaque(), "sideways")  # named by its repr: `name` and `__name__` both raise
    marked = effect(Opaque(), "read")
    assert declared_effect(marked) is ToolEffect.READ
