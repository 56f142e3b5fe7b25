"""The run context as durable JSON: checked when the flow is built, carried through every step.

Plain SDK code keeps one context object for a whole run and, in the examples' loops, for
the whole conversation: tools, ``on_handoff`` callbacks, guardrails and hooks change it and
every later step sees the change. A session's steps run in different activities (and
processes), so the context travels as JSON: in the run state between steps, as a tool
step's state update back to the next model step, and in the carry between turns. A large
context goes by reference with the run state and the carry (the core stores either above
its inline limit).

The encoding is pydantic's (`TypeAdapter`), so a pydantic model, a dataclass (nested ones
too), a `TypedDict` or a plain JSON dict round-trips; anything else is refused when the
flow is built.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from pydantic import TypeAdapter

from sessionflow import UnsupportedOptionError

__all__ = ["ContextCodec"]

# The session ID the build check gives the factory; the context it builds is thrown away.
BUILD_CHECK_SESSION_ID = "sessionflow-build-check"


class ContextCodec:
    """Builds, encodes and rebuilds the run context of one flow.

    Args:
        factory: Builds a fresh context from the session ID (the first step of a session,
            or a session whose run state predates durable contexts); None means no context.
    """

    def __init__(self, factory: Callable[[str], Any] | None) -> None:
        self._factory = factory
        self._type: type[Any] | None = None
        if factory is not None:
            sample = factory(BUILD_CHECK_SESSION_ID)
            if sample is not None:
                self._type = type(cast(object, sample))
                self._check(sample)

    @property
    def has_factory(self) -> bool:
        """False: the run's context is None in every step."""
        return self._factory is not None

    def fresh(self, session_id: str) -> Any:
        return self._factory(session_id) if self._factory is not None else None

    def dump(self, context: Any) -> Any:
        """The context as JSON values (None for no context)."""
        if context is None:
            return None
        return _adapter(type(cast(object, context))).dump_python(context, mode="json")

    def load(self, data: Any, session_id: str) -> Any:
        """The context ``data`` encodes, as the factory's type; a fresh one for None."""
        if data is None:
            return self.fresh(session_id)
        if self._type is None:
            return data
        return _adapter(self._type).validate_python(data)

    def _check(self, sample: Any) -> None:
        name = type(cast(object, sample)).__name__
        try:
            data = self.dump(sample)
            json.dumps(data)
            again = self.dump(self.load(data, BUILD_CHECK_SESSION_ID))
        except Exception as error:
            raise UnsupportedOptionError(
                "context_factory",
                f"the run context ({name}) cannot be stored with the session: {error}. The context "
                "lives for the whole run and travels between steps as JSON, so make it a pydantic "
                "model, a dataclass or a JSON dict, and keep clients and secrets out of it (build "
                "them in the tools, or reach them through module-level objects)",
            ) from error
        if again != data:
            raise UnsupportedOptionError(
                "context_factory",
                f"the run context ({name}) does not come back the same from JSON ({data!r} becomes "
                f"{again!r}); the context travels between steps as JSON, so every field must round-trip",
            )


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}


def _adapter(kind: type[Any]) -> TypeAdapter[Any]:
    # Building an adapter compiles a schema; every step of the flow uses the same few types.
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        adapter = _ADAPTERS[kind] = TypeAdapter(kind)
    return adapter
