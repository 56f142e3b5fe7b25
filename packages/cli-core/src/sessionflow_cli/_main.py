"""Arguments, dispatch, and exit codes of the `sessionflow` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from types import ModuleType

    from rich.console import Console

# Nothing heavy at import: `--help` and a usage error end in `parse_args` with argparse
# alone. rich, `sessionflow` (through `_errors`) and each command's own modules load once
# the arguments are parsed, and only what the command runs (`_dispatch`).

__all__ = ["COMMANDS", "build_parser", "main", "run"]

COMMANDS = (
    "chat",
    "init",
    "sessions",
    "connectors",
    "frameworks",
    "server",
    "payloads",
    "codec-server",
    "worker",
    "serve",
)

_DESCRIPTION = """\
Durable agent sessions on Temporal, in your terminal.

commands:
  chat        chat with an agent in this terminal (the default), or send one message with -p
  init        create or replace the configuration file (~/.sessionflow/<framework>.yaml)
  sessions    list this command's sessions
  connectors  list the MCP servers' tools, with effects and approval rules
  frameworks  list the frameworks the installed plugins offer
  server      status, start or stop the embedded Temporal dev server (and list or stop the resident workers)
  payloads    gc: delete the stored payloads of sessions that ended long ago
  codec-server  decode encrypted payloads for the Temporal UI (/encode, /decode)
  worker      serve this command's flow as a worker (one per host); SIGTERM stops it gracefully;
              --resident is the background worker chat and -p start and reuse
  serve       the HTTP API over this command's sessions (and their worker), with a one-time login URL

exit codes: 0 success, 1 failure at run time, 2 usage or configuration error
"""


def _add_framework(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-f", "--framework", default="builtin", help="the framework (default: builtin)")
    parser.add_argument(
        "-c",
        "--config",
        metavar="FILE",
        help="the configuration file (default: ~/.sessionflow/<framework>.yaml)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sessionflow", description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="command")

    chat = commands.add_parser("chat", help="chat in this terminal (the default command)")
    _add_framework(chat)
    chat.add_argument(
        "-y", "--yes", action="store_true", help="write and use the defaults when there is no file"
    )
    chat.add_argument("-r", "--resume", metavar="ID", help="continue a session of this flow type")
    chat.add_argument(
        "-m", "--model", metavar="MODEL", help="override the configured model ('demo' runs offline)"
    )
    chat.add_argument("-p", "--prompt", metavar="TEXT", help="send one message, print the answer, and exit")
    chat.add_argument(
        "--in-process-worker",
        action="store_true",
        help="serve the flow inside this command instead of the resident worker "
        "(also: SESSIONFLOW_RESIDENT_WORKER=0)",
    )
    chat.add_argument(
        "--approve",
        metavar="TOOL",
        action="append",
        default=[],
        help="with -p: approve calls of this tool (repeat it, or separate names with commas)",
    )

    init = commands.add_parser("init", help="create or replace the configuration file")
    _add_framework(init)
    init.add_argument("-y", "--yes", action="store_true", help="write the defaults without asking")
    init.add_argument("--print-schema", action="store_true", help="print the configuration's JSON Schema")

    sessions = commands.add_parser("sessions", help="list this command's sessions")
    _add_framework(sessions)
    sessions.add_argument("-m", "--model", metavar="MODEL", help="override the configured model")
    sessions.add_argument(
        "--state",
        choices=("idle", "running", "waiting_for_approval", "stopped"),
        help="only sessions in this state (a server-side search attribute query)",
    )
    sessions.add_argument("--user", metavar="NAME", help="only sessions this user started")
    sessions.add_argument(
        "--since", metavar="AGE", help="only sessions active in the last AGE (30m, 12h, 7d)"
    )

    connectors = commands.add_parser(
        "connectors", help="list the connectors' tools, effects and approval rules"
    )
    _add_framework(connectors)

    commands.add_parser("frameworks", help="list the frameworks and their capabilities")

    server = commands.add_parser("server", help="the embedded Temporal dev server")
    server.add_argument("action", choices=("status", "start", "stop"))
    _add_framework(server)

    payloads = commands.add_parser("payloads", help="the payload store: gc deletes ended sessions' payloads")
    payloads.add_argument("action", choices=("gc",))
    payloads.add_argument(
        "--older-than", default="30d", metavar="AGE", help="sessions that ended this long ago (default: 30d)"
    )
    _add_framework(payloads)

    codec = commands.add_parser("codec-server", help="decode encrypted payloads for the Temporal UI")
    codec.add_argument("--host", default="127.0.0.1", help="the address to bind (default: 127.0.0.1)")
    codec.add_argument("--port", type=int, default=8081, help="the port (default: 8081; 0 picks a free one)")
    codec.add_argument(
        "--ui-origin",
        action="append",
        metavar="ORIGIN",
        help="the Temporal UI's origin, the only one CORS allows; repeat for more "
        "(default: http://localhost:8233)",
    )
    codec.add_argument(
        "--keys-file", metavar="FILE", help="the key ring (default: $SESSIONFLOW_ENCRYPTION_KEYS[_FILE])"
    )
    codec.add_argument(
        "--token-file", metavar="FILE", help="the bearer token (default: $SESSIONFLOW_CODEC_TOKEN[_FILE])"
    )
    codec.add_argument(
        "--max-body-bytes", type=int, default=16 * 1024 * 1024, help="the largest request (default: 16 MiB)"
    )
    worker = commands.add_parser("worker", help="serve the flow as a resident worker until SIGTERM")
    _add_framework(worker)
    worker.add_argument("-m", "--model", metavar="MODEL", help="override the configured model")
    worker.add_argument(
        "--flow-type",
        metavar="NAME",
        help="serve this flow type (default: the chat's on this host; give every host the same one)",
    )
    worker.add_argument(
        "--resident",
        action="store_true",
        help="the background worker chat and -p start and reuse: recorded in ~/.sessionflow/workers, "
        "stopped when idle (worker.idle_timeout, $SESSIONFLOW_WORKER_IDLE_TIMEOUT; default 900 s)",
    )
    worker.add_argument(
        "--grace",
        type=float,
        metavar="SECONDS",
        help="what running steps get to finish after SIGTERM (default: $SESSIONFLOW_SHUTDOWN_GRACE, else 20)",
    )
    serve = commands.add_parser("serve", help="the HTTP API over this command's sessions")
    _add_framework(serve)
    serve.add_argument("-m", "--model", metavar="MODEL", help="override the configured model")
    serve.add_argument("--host", default="127.0.0.1", help="the address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="the port (default: 8765; 0 picks a free one)")
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host (needs --token-store as well)",
    )
    serve.add_argument(
        "--token-store", metavar="FILE", help="keep tokens (hashed) in this file instead of in memory"
    )
    serve.add_argument(
        "--issue-token", metavar="USER", help="add a token for USER to --token-store, print it, and exit"
    )
    serve.add_argument(
        "--revoke-token",
        metavar="USER",
        help="remove every token of USER from --token-store, print how many, and exit "
        "(a running server refuses them at once)",
    )
    serve.add_argument(
        "--webhook-url",
        metavar="URL",
        help="POST interrupts and ended turns here, signed with $SESSIONFLOW_WEBHOOK_SECRET",
    )
    serve.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="a reverse proxy's address (or network) whose X-Forwarded-For names the client; "
        "repeat for several (default: none, the peer is the client)",
    )
    return parser


def _with_default_command(argv: Sequence[str]) -> list[str]:
    args = list(argv)
    if not args or (args[0] not in COMMANDS and args[0] not in ("-h", "--help", "--version")):
        return ["chat", *args]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(_with_default_command(sys.argv[1:] if argv is None else argv))
    _without_httpx_cli()
    from rich.console import Console

    from sessionflow_cli._errors import EXIT_FAILURE, CliError

    out = Console(highlight=False, soft_wrap=True)
    info = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        return run(args, out=out, info=info)
    except CliError as error:
        info.print(f"error: {error.message}", style="red", markup=False, highlight=False, soft_wrap=True)
        return error.exit_code
    except KeyboardInterrupt:
        info.print("Interrupted.", style="yellow")
        return EXIT_FAILURE


def _without_httpx_cli() -> None:
    """Keep httpx from importing its own command line when a command imports httpx.

    ``import httpx`` imports ``httpx._main`` (the ``httpx`` command: click, pygments and
    rich's progress bars and syntax, ~50 ms) and falls back to a stub ``main`` when that
    import fails. This process never runs httpx's command, so ``httpx._main`` is marked
    missing before httpx loads; once httpx is imported this does nothing.
    """
    if "httpx" not in sys.modules:
        # None in sys.modules is how the import system marks a module missing.
        cast("dict[str, ModuleType | None]", sys.modules).setdefault("httpx._main", None)


def run(args: argparse.Namespace, *, out: Console, info: Console) -> int:
    # Heavy imports (the engine loads temporalio, connectors the MCP SDK) wait until the
    # command that needs them runs: `_dispatch` imports one command module.
    if args.version:
        from importlib.metadata import version

        out.print(f"sessionflow {version('sessionflow-cli')}")
        return 0
    if args.command == "init" and args.print_schema:
        from sessionflow_cli.config import config_schema_text

        out.file.write(config_schema_text())
        return 0
    from sessionflow_cli._dispatch import dispatch

    return dispatch(args, out=out, info=info, cwd=Path.cwd())
