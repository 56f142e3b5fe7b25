"""One way to say what a tool does, in every framework: `effect` and `tool_effect`.

A mark says a tool's `ToolEffect` (and, optionally, its whole `ToolPolicy`) on the tool
object itself, whatever framework made it: an OpenAI ``FunctionTool``, a LangChain tool, a
Pydantic AI tool function, a Claude SDK ``SdkMcpTool``, or a plain function for
`sessionflow.builtin.tool`. The marked object is returned unchanged for its framework: the
mark is a private attribute (``__sessionflow_effect__``), or, for an object that refuses
attributes (a frozen dataclass, a strict pydantic model), an entry in this module's
registry keyed by the object's identity. The same mark goes on the function a framework
object wraps (``__wrapped__``), so that the decorator works above or below the framework's
own and a framework's copy of the object still carries it.

Adapters read a mark with `declared_effect` and `declared_policy`. The order every adapter
applies: the session's explicit ``AgentSessionOptions.tool_policies`` > this mark > the
framework's own metadata (``metadata={"sessionflow_effect": ...}``, the older form) > MCP
annotations > ``AgentSessionOptions.default_tool_effect``.

This module imports no framework.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sessionflow.session.tools import ToolEffect, ToolPolicy

__all__ = ["EFFECT_MARK_ATTRIBUTE", "declared_effect", "declared_policy", "effect", "tool_effect"]

EFFECT_MARK_ATTRIBUTE = "__sessionflow_effect__"
"""The attribute a mark is kept in, on an object that takes attributes."""

_T = TypeVar("_T")

_MAX_WRAPPED = 16
"""How many ``__wrapped__`` links a reader follows (a decorator chain is never this deep)."""


@dataclass(frozen=True)
class _EffectMark:
    effect: ToolEffect
    policy: ToolPolicy | None


@dataclass(frozen=True)
class _Registered:
    """A mark of an object that refuses attributes; ``target`` is a weak reference when it can be."""

    target: Callable[[], object]
    mark: _EffectMark


_registry: dict[int, _Registered] = {}


def effect(tool: _T, effect: ToolEffect | str, *, policy: ToolPolicy | None = None) -> _T:
    """Mark ``tool`` with its effect, and return the same object.

    ``tool`` is any framework's tool object or a plain function; the framework sees it
    unchanged. The session reads the mark in every adapter: a ``read`` tool runs without
    approval and is retried, a ``non_idempotent_write`` runs once and asks for approval by
    default (see `ToolEffect`). A name-keyed ``AgentSessionOptions.tool_policies`` entry
    still wins over the mark.

    Args:
        tool: The tool object (or function) to mark.
        effect: A `ToolEffect` or its value (``"read"``, ``"idempotent_write"``,
            ``"non_idempotent_write"``, ``"unclassified"``).
        policy: The tool's whole policy (approval, repeats, output size, local timeout);
            its ``effect`` must be ``effect``.

    Raises:
        ValueError: ``effect`` is not a `ToolEffect` value, or ``policy`` has another effect.
        TypeError: ``policy`` is not a `ToolPolicy`.
    """
    mark = _checked_mark(tool, effect, policy)
    if inspect.ismethod(tool):
        # A bound method is made anew on each access and refuses attributes; its function
        # carries the mark (and a bound method reads its function's attributes).
        _store(tool.__func__, mark)
        return tool
    _store(tool, mark)
    underlying = _wrapped(tool)
    if underlying is not None:
        _store(underlying, mark)
    return tool


def tool_effect(effect: ToolEffect | str, *, policy: ToolPolicy | None = None) -> Callable[[_T], _T]:
    """`effect` as a decorator: ``@tool_effect("read")`` above or below the framework's own.

    Below the framework's decorator it marks the function, which the adapter finds inside
    the framework's tool object; above it, it marks the tool object (and the function it
    wraps, when the object says which, ``__wrapped__``).
    """

    def mark(tool: _T) -> _T:
        return _effect(tool, effect, policy=policy)

    return mark


_effect = effect


def declared_effect(obj: object) -> ToolEffect | None:
    """The effect ``obj`` is marked with (`effect`, `tool_effect`), or None when it has no mark.

    A mark on the object wins; otherwise the functions it wraps (``__wrapped__``) are asked,
    nearest first.
    """
    mark = _find(obj)
    return mark.effect if mark is not None else None


def declared_policy(obj: object) -> ToolPolicy | None:
    """The whole policy ``obj`` is marked with, or None when its mark gives an effect only (or it has none)."""
    mark = _find(obj)
    return mark.policy if mark is not None else None


def _checked_mark(tool: object, effect: ToolEffect | str, policy: ToolPolicy | None) -> _EffectMark:
    try:
        parsed = ToolEffect(effect)
    except ValueError:
        allowed = ", ".join(repr(member.value) for member in ToolEffect)
        raise ValueError(
            f"tool {_tool_name(tool)!r}: effect {effect!r} is not a tool effect; expected one of {allowed}"
        ) from None
    if policy is not None:
        if not isinstance(policy, ToolPolicy):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(
                f"tool {_tool_name(tool)!r}: policy must be a ToolPolicy, got {type(policy).__name__}"
            )
        if policy.effect is not parsed:
            raise ValueError(
                f"tool {_tool_name(tool)!r}: the policy's effect {policy.effect.value!r} is not the "
                f"declared effect {parsed.value!r}"
            )
    return _EffectMark(parsed, policy)


def _tool_name(tool: object) -> str:
    for attribute in ("name", "__name__"):
        try:
            value = getattr(tool, attribute, None)
        except Exception:  # a property that fails: fall back to the repr
            value = None
        if isinstance(value, str) and value:
            return value
    return repr(tool)


def _store(obj: object, mark: _EffectMark) -> None:
    try:
        setattr(obj, EFFECT_MARK_ATTRIBUTE, mark)
        if _own_mark(obj) is mark:
            _registry.pop(id(obj), None)
            return
    except (AttributeError, TypeError, ValueError):
        # Frozen dataclasses (FrozenInstanceError is an AttributeError), objects with
        # __slots__, and models that refuse unknown fields (pydantic raises ValueError).
        pass
    key = id(obj)
    try:
        target: Callable[[], object] = weakref.ref(obj, lambda _: _registry.pop(key, None))
    except TypeError:
        # Not weakly referable: the registry keeps the object, so its id is never reused.
        target = _Strong(obj)
    _registry[key] = _Registered(target, mark)


@dataclass(frozen=True)
class _Strong:
    obj: object

    def __call__(self) -> object:
        return self.obj


def _own_mark(obj: object) -> _EffectMark | None:
    try:
        value: Any = getattr(obj, EFFECT_MARK_ATTRIBUTE, None)
    except Exception:
        value = None
    if isinstance(value, _EffectMark):
        return value
    registered = _registry.get(id(obj))
    if registered is not None and registered.target() is obj:
        return registered.mark
    return None


def _wrapped(obj: object) -> object | None:
    try:
        value: Any = getattr(obj, "__wrapped__", None)
    except Exception:  # OpenAI's FunctionTool raises when it wraps no Python callable
        return None
    return value if value is not None and value is not obj else None


def _find(obj: object) -> _EffectMark | None:
    current: object | None = obj
    for _ in range(_MAX_WRAPPED):
        if current is None:
            return None
        mark = _own_mark(current)
        if mark is not None:
            return mark
        current = _wrapped(current)
    return None
