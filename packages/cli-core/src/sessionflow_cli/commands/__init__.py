"""The `sessionflow` subcommands, one module each; `sessionflow_cli._dispatch` picks one.

`_chat` (the default command), `_connectors`, `_frameworks`, `_init`, `_payloads`,
`_serve`, `_server`, `_sessions` and `_worker`. What they share (the engine, the runtime, sessions, settings)
stays one level up, in `sessionflow_cli`.

The names below load on first use (`sessionflow.kit.lazy_exports`): importing this package
imports no command, so a command pays only for its own imports (`chat` for the worker and
the MCP SDK, `frameworks` for neither).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sessionflow.kit import lazy_exports

if TYPE_CHECKING:
    from sessionflow_cli.commands._chat import ChatRequest, run_chat
    from sessionflow_cli.commands._connectors import run_connectors
    from sessionflow_cli.commands._frameworks import run_frameworks
    from sessionflow_cli.commands._init import run_init
    from sessionflow_cli.commands._payloads import run_payloads
    from sessionflow_cli.commands._serve import run_serve
    from sessionflow_cli.commands._server import run_server
    from sessionflow_cli.commands._sessions import run_sessions

__getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "ChatRequest",
    "run_chat",
    "run_connectors",
    "run_frameworks",
    "run_init",
    "run_payloads",
    "run_serve",
    "run_server",
    "run_sessions",
]
