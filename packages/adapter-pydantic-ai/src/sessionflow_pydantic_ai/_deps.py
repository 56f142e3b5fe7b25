"""The run's deps as durable state, and the worker's resources beside them.

Plain Pydantic AI code passes one deps object to `agent.run`; tools and dynamic
instructions read and change it through ``ctx.deps``, and a multi-turn app keeps it from
turn to turn. A session's steps run in separate activities (after a crash, in another
process), so the deps travel as JSON: in the run state between the steps of a turn, as a
tool step's update back to the next model step, and in the carry between turns.

What cannot travel (an HTTP client, a database connection) is a *resource*: the fields
named by ``deps_resources``, an async context manager entered once per worker (its value
maps field names to the objects) and left when the worker stops. Every step puts the
worker's resources into those fields, and they are never stored. State is what the deps
say about the conversation; resources are how a worker reaches the world.

The encoding is pydantic's, field by field for a dataclass or a pydantic model (nested
models and dataclasses round-trip), or whole for any other type pydantic can validate.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import typing
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any, TypeAlias, cast

from pydantic import BaseModel, TypeAdapter

from sessionflow import UnsupportedOptionError

__all__ = ["DepsCodec", "DepsFactory", "DepsResources"]

DepsFactory: TypeAlias = "Callable[[], Any | Awaitable[Any]]"
"""Builds a session's deps, once, at its first model step (sync or async, no arguments)."""

DepsResources: TypeAlias = "Callable[[], AbstractAsyncContextManager[Mapping[str, Any]]]"
"""Opens the worker's resources: field name -> object, put into the deps on every step."""

_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _adapter(kind: Any) -> TypeAdapter[Any]:
    # Building an adapter compiles a schema; every step uses the same few types.
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        adapter = _ADAPTERS[kind] = TypeAdapter(kind)
    return adapter


class DepsCodec:
    """Builds, stores and rebuilds one flow's deps."""

    def __init__(self, factory: DepsFactory | None, resources: DepsResources | None) -> None:
        self._factory = factory
        self._open_resources = resources
        self._type: type[Any] | None = None
        self._fields: dict[str, Any] | None = None
        self._opened: dict[asyncio.AbstractEventLoop, tuple[AsyncExitStack, Mapping[str, Any]]] = {}
        self._resource_keys: frozenset[str] = frozenset()
        self._lock = asyncio.Lock()

    @property
    def has_factory(self) -> bool:
        return self._factory is not None

    def learn_type(self, deps_type: Any) -> None:
        """The agent's ``deps_type``: what stored deps are rebuilt as (if it is a class)."""
        if isinstance(deps_type, type) and deps_type is not type(None) and self._type is None:
            self._set_type(cast(type[Any], deps_type))

    async def fresh(self) -> Any:
        """New deps from the factory, with the worker's resources in their fields."""
        if self._factory is None:
            return None
        built = self._factory()
        deps = await built if inspect.isawaitable(built) else built
        if deps is None:
            return None
        if self._type is None:
            self._set_type(type(cast(object, deps)))
        return self._with_resources(deps, await self.resources())

    def dump(self, deps: Any) -> Any:
        """The deps as JSON values, without the resource fields (None for no deps).

        Raises:
            UnsupportedOptionError: A field that is not a resource cannot be stored.
        """
        if deps is None:
            return None
        skip = self._resource_names
        try:
            if self._fields is not None:
                data = {
                    name: _adapter(kind).dump_python(getattr(deps, name), mode="json")
                    for name, kind in self._fields.items()
                    if name not in skip
                }
            else:
                data = _adapter(type(cast(object, deps))).dump_python(deps, mode="json")
            json.dumps(data)
        except Exception as error:
            raise UnsupportedOptionError(
                "deps_factory",
                f"the deps ({type(cast(object, deps)).__name__}) cannot be stored with the session: "
                f"{error}. Deps live for the whole run and travel between steps as JSON: make them a "
                "dataclass or a pydantic model of JSON values, and name the fields that hold clients "
                "or connections in deps_resources (the worker builds those)",
            ) from error
        return data

    async def load(self, data: Any) -> Any:
        """The deps ``data`` encodes, with the worker's resources; fresh ones for None."""
        if data is None:
            return await self.fresh()
        if self._type is None:
            return data
        resources = await self.resources()
        if self._fields is None:
            return _adapter(self._type).validate_python(data)
        stored = cast(dict[str, Any], data)
        values = {
            name: _adapter(kind).validate_python(stored[name])
            for name, kind in self._fields.items()
            if name in stored
        }
        values.update({name: value for name, value in resources.items() if name in self._fields})
        if issubclass(self._type, BaseModel):
            # Each field was validated on its own; a resource is no JSON value to validate.
            return self._type.model_construct(**values)
        return self._type(**values)

    async def resources(self) -> Mapping[str, Any]:
        """The worker's resources, opened on first use in this event loop."""
        if self._open_resources is None:
            return {}
        loop = asyncio.get_running_loop()
        opened = self._opened.get(loop)
        if opened is None:
            async with self._lock:
                opened = self._opened.get(loop)
                if opened is None:
                    stack = AsyncExitStack()
                    values = await stack.enter_async_context(self._open_resources())
                    opened = self._opened[loop] = (stack, dict(values))
                    self._resource_keys = frozenset(values)
        return opened[1]

    @asynccontextmanager
    async def worker_scope(self) -> AsyncGenerator[None]:
        """Closes the resources this event loop opened when the worker stops."""
        try:
            yield
        finally:
            opened = self._opened.pop(asyncio.get_running_loop(), None)
            if opened is not None:
                await opened[0].aclose()

    @property
    def _resource_names(self) -> frozenset[str]:
        return frozenset(self._fields or ()) & self._resource_keys

    def _with_resources(self, deps: Any, resources: Mapping[str, Any]) -> Any:
        if not resources or self._fields is None:
            return deps
        present = {name: value for name, value in resources.items() if name in self._fields}
        if isinstance(deps, BaseModel):
            return deps.model_copy(update=present)
        return dataclasses.replace(deps, **present)

    def _set_type(self, kind: type[Any]) -> None:
        self._type = kind
        if dataclasses.is_dataclass(kind):
            hints = typing.get_type_hints(kind)
            self._fields = {f.name: hints.get(f.name, Any) for f in dataclasses.fields(kind) if f.init}
        elif issubclass(kind, BaseModel):
            self._fields = {name: field.annotation for name, field in kind.model_fields.items()}
