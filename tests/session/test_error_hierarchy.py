"""Every public error of every distribution is a `SessionError`, in one of its two branches."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
from types import ModuleType

import pytest

from sessionflow import PayloadStoreError, SessionError, SessionRunError, UnsupportedOptionError, UserError
from sessionflow.builtin import ModelHTTPError
from sessionflow.kit import UnknownEnvironmentVariable
from sessionflow.plugins import UnknownFrameworkError
from sessionflow.temporal import (
    CodecRequestError,
    EncryptionKeyError,
    PayloadDecryptionError,
    PlaintextPayloadError,
)
from sessionflow.temporal.workflow._cancel import TurnCancelled
from sessionflow_claude_agent_sdk import ClaudeStepError
from sessionflow_cli._errors import RuntimeFailure, UsageError
from sessionflow_cli.config import ConfigError
from sessionflow_langgraph import StepViolation
from sessionflow_openai_agents import AgentGraphError, UnsupportedAgentOptionError

PACKAGES = [
    "sessionflow",
    "sessionflow_cli",
    "sessionflow_local_tools",
    "sessionflow_openai_agents",
    "sessionflow_claude_agent_sdk",
    "sessionflow_langgraph",
    "sessionflow_pydantic_ai",
]


def _public_modules(name: str) -> list[ModuleType]:
    """The package and every submodule whose dotted name has no private part."""
    package = importlib.import_module(name)
    modules = [package]
    for info in pkgutil.walk_packages(package.__path__, f"{name}."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        modules.append(importlib.import_module(info.name))
    return modules


def _public_errors() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for package in PACKAGES:
        for module in _public_modules(package):
            for export in getattr(module, "__all__", ()):
                value = getattr(module, export)
                if isinstance(value, type) and issubclass(value, BaseException):
                    found[f"{module.__name__}.{export}"] = value
    return found


def test_every_public_error_is_a_session_error_in_one_branch() -> None:
    errors = _public_errors()
    assert "sessionflow_openai_agents.AgentGraphError" in errors  # the walk reaches the adapters
    outside = sorted(name for name, cls in errors.items() if not issubclass(cls, SessionError))
    assert outside == []
    unbranched = sorted(
        name
        for name, cls in errors.items()
        if cls is not SessionError and not issubclass(cls, UserError | SessionRunError)
    )
    assert unbranched == []


@pytest.mark.parametrize(
    ("error", "also"),
    [
        (AgentGraphError("two agents named triage"), ValueError),
        (ClaudeStepError("the CLI exited 1"), RuntimeError),
        (StepViolation("a second model call"), RuntimeError),
        (ModelHTTPError(503, "busy"), RuntimeError),
        (TurnCancelled(), SessionRunError),
        (UsageError("bad flag"), UserError),
        (RuntimeFailure("server down"), SessionRunError),
        (ConfigError("schema", "/model", "not a string", hint="say a name"), UserError),
        (PayloadStoreError("s3://bucket", "cannot be read", OSError("timed out")), SessionRunError),
        (UnknownFrameworkError("nope", ["builtin"]), KeyError),
        (UnsupportedOptionError("tools[2]", "runs in-process"), ValueError),
        (UnsupportedAgentOptionError("handoffs[0]", "no target agent"), AgentGraphError),
        (EncryptionKeyError("key 'k1' is 16 bytes"), ValueError),
        (PayloadDecryptionError("key 'k1' is not in the ring", key_id="k1"), SessionRunError),
        (CodecRequestError("the body is not JSON"), UserError),
        (PlaintextPayloadError("a payload is not encrypted"), ValueError),
        (UnknownEnvironmentVariable("SESSIONFLOW_NOPE is not listed in sessionflow._environment"), KeyError),
    ],
)
def test_errors_keep_their_old_bases_and_survive_pickling(error: SessionError, also: type) -> None:
    assert isinstance(error, also)
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.message == error.message


def test_retryability_is_read_from_the_class() -> None:
    assert not UserError.retryable
    assert not AgentGraphError.retryable
    assert not UnsupportedOptionError.retryable
    assert SessionRunError.retryable
    assert ModelHTTPError.retryable
    assert ModelHTTPError(500, "x").status == 500
