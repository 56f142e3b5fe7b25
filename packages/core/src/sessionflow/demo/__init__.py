"""The offline demo's model: a scripted model server on loopback.

`ScriptedModelServer` answers from a script in the wire formats of OpenAI Chat
Completions, OpenAI Responses and Anthropic Messages, streaming or not, and records what
it was sent. It is the model of `sessionflow chat --model demo` and of
`python -m sessionflow.demo` (an offline session on the embedded engine), and the model
every test and benchmark talks to through its framework's real HTTP client.
"""

from typing import TYPE_CHECKING

from sessionflow.demo._hosted_mcp import mcp_approval_request, mcp_call, mcp_list_tools, mcp_tool
from sessionflow.demo._model_script import (
    FaultKind,
    ModelFault,
    ModelReply,
    RecordedRequest,
    ScriptedToolCall,
    ScriptedUsage,
)
from sessionflow.kit._lazy import lazy_exports

# Loaded on first use so `python -m sessionflow.demo._model_server` does not import itself twice.
if TYPE_CHECKING:
    from sessionflow.demo._model_server import ModelServerControl, Responder, ScriptedModelServer

__getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    # The server
    "ModelServerControl",
    "Responder",
    "ScriptedModelServer",
    # What it answers
    "FaultKind",
    "ModelFault",
    "ModelReply",
    "ScriptedToolCall",
    "ScriptedUsage",
    # What it was sent
    "RecordedRequest",
    # Hosted MCP output items (Responses), for `ModelReply.output_items`
    "mcp_approval_request",
    "mcp_call",
    "mcp_list_tools",
    "mcp_tool",
]
