"""`ModelCallLimits`: how many model calls one worker runs at once, per model or provider.

A provider's quota (requests or tokens per minute) is shared by every call with the same
key. A worker that runs 100 steps at once can spend it in a second and then collect 429s;
a limit keeps the calls beyond it waiting in the worker instead (see `_model_call_gate`).

Limits are per worker process: the workers `build_workers` builds share one set of slots.
``SESSIONFLOW_MODEL_CALL_LIMITS`` gives them to a worker that is not given any in code,
the `sessionflow` command's too::

    SESSIONFLOW_MODEL_CALL_LIMITS="gpt-4.1-mini=2,openai=8,*=32"
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from sessionflow._environment import read_env

__all__ = ["ALL_MODELS", "MODEL_CALL_LIMITS_ENV", "ModelCallLimits", "model_call_keys"]

MODEL_CALL_LIMITS_ENV = "SESSIONFLOW_MODEL_CALL_LIMITS"

ALL_MODELS = "*"
"""The key every model call counts against, whatever its model."""

_KEY = re.compile(r"^[^\s=,]{1,200}$")


@dataclass(frozen=True)
class ModelCallLimits:
    """At most ``limits[key]`` model calls with that key run at once on one worker.

    A model call counts against `ALL_MODELS` (``"*"``) and against each key of
    `model_call_keys`: its model's name and, where the name says it (``"openai:gpt-4o"``,
    ``"openai/gpt-4o"``), its provider and the bare model name. A call takes a slot of every
    limit it counts against before it starts, and waits (heartbeating) while one is full.
    """

    limits: Mapping[str, int] = field(default_factory=lambda: cast(dict[str, int], {}))

    def __post_init__(self) -> None:
        for key, limit in self.limits.items():
            if not isinstance(key, str) or not _KEY.match(key):  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ValueError(
                    f"model call limit key {key!r} must be 1-200 characters without spaces, '=' or ','"
                )
            if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
                raise ValueError(f"model call limit for {key!r} must be an integer >= 1, got {limit!r}")
        object.__setattr__(self, "limits", dict(self.limits))

    @classmethod
    def parse(cls, text: str) -> ModelCallLimits:
        """From ``"key=limit,key=limit"`` (the environment variable's form); blank gives none."""
        limits: dict[str, int] = {}
        for part in text.split(","):
            entry = part.strip()
            if not entry:
                continue
            key, sep, value = entry.rpartition("=")
            key, value = key.strip(), value.strip()
            if not sep or not key or not value.isdigit():
                raise ValueError(
                    f"model call limit {entry!r} must read key=limit (such as gpt-4.1-mini=2 or *=16)"
                )
            if key in limits:
                raise ValueError(f"model call limit {key!r} is given twice")
            limits[key] = int(value)
        return cls(limits)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ModelCallLimits:
        """The limits in ``$SESSIONFLOW_MODEL_CALL_LIMITS``; none when it is unset or blank."""
        text = read_env(MODEL_CALL_LIMITS_ENV, "", environ=environ)
        try:
            return cls.parse(text)
        except ValueError as error:
            raise ValueError(f"${MODEL_CALL_LIMITS_ENV}: {error}") from None

    def applying(self, keys: Iterable[str]) -> list[tuple[str, int]]:
        """The limits a call with these keys counts against, in one fixed (sorted) order.

        Every call takes its slots in the same order, so two calls never hold one slot each
        while waiting for the other's.
        """
        wanted = {ALL_MODELS, *keys}
        return sorted((key, limit) for key, limit in self.limits.items() if key in wanted)


def model_call_keys(runner: object, session_settings: Mapping[str, Any]) -> tuple[str, ...]:
    """The keys a runner's model call counts against, besides `ALL_MODELS`.

    A runner names them with a ``model_call_keys(session_settings)`` method (the command's
    runner does: the turn's model); else its ``model`` attribute, when a string, is used (the
    built-in runner's). A name ``provider:model`` or ``provider/model`` also gives both parts.
    """
    names: list[str] = []
    method = getattr(runner, "model_call_keys", None)
    if callable(method):
        given: Any = method(session_settings)
        names = [str(name) for name in cast(Iterable[Any], given or ())]
    else:
        model: Any = getattr(runner, "model", None)
        if isinstance(model, str):
            names = [model]
    keys: list[str] = []
    for name in names:
        for part in (name, *_parts(name)):
            if part and part not in keys:
                keys.append(part)
    return tuple(keys)


def _parts(name: str) -> tuple[str, ...]:
    for separator in (":", "/"):
        provider, sep, model = name.partition(separator)
        if sep and provider and model:
            return provider, model
    return ()
