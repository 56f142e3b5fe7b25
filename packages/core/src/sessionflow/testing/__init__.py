"""Test kit shipped in the wheel: dev server stack, worker children, gates, logs, waits."""

from typing import TYPE_CHECKING

from sessionflow.lazy import lazy_exports
from sessionflow.temporal import StepHistoryEntry, read_step_history
from sessionflow.testing._gates import FileGate, InvocationLog
from sessionflow.testing._model_script import (
    ModelFault,
    ModelReply,
    RecordedRequest,
    ScriptedToolCall,
    ScriptedUsage,
)
from sessionflow.testing._scripted_flow import STATE_DIR_ENV, load_scripted_flow, save_scripted_flow
from sessionflow.testing._scripted_runner import ScriptedRunner, read_script, scripted_text, write_script
from sessionflow.testing._stack import SERVER_ADDRESS_ENV, AgentTestStack, WorkerProcess, ensure_test_server
from sessionflow.testing._timings import CRASH_TIMINGS
from sessionflow.testing._waiting import wait_for_agent_snapshot, wait_until

# Loaded on first use so `python -m sessionflow.testing._model_server` does not import itself twice.
if TYPE_CHECKING:
    from sessionflow.testing._model_server import ModelServerControl, ScriptedModelServer

__getattr__, __dir__ = lazy_exports(__name__)


__all__ = [
    "CRASH_TIMINGS",
    "SERVER_ADDRESS_ENV",
    "STATE_DIR_ENV",
    "AgentTestStack",
    "FileGate",
    "InvocationLog",
    "ModelFault",
    "ModelReply",
    "ModelServerControl",
    "RecordedRequest",
    "ScriptedModelServer",
    "ScriptedRunner",
    "ScriptedToolCall",
    "ScriptedUsage",
    "StepHistoryEntry",
    "WorkerProcess",
    "ensure_test_server",
    "load_scripted_flow",
    "read_script",
    "read_step_history",
    "save_scripted_flow",
    "scripted_text",
    "wait_for_agent_snapshot",
    "wait_until",
    "write_script",
]
