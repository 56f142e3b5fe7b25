"""Arguments, dispatch, and exit codes of the `sessionflow` command."""

from __future__ import annotations

import argparse
import shlex
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

__all__ = ["COMMANDS", "OUTPUT_FORMATS", "arrange", "build_parser", "main", "run"]

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

OUTPUT_FORMATS = ("text", "json", "stream-json")
"""`--output-format` of `-p`: Claude Code's names."""

# One line per command: the top-level help lists these once, and each command's own
# `--help` opens with its line.
_SUMMARIES = {
    "chat": "chat with an agent in this terminal (the default command), or send one message with -p",
    "init": "create or replace the configuration file (~/.sessionflow/<framework>.yaml)",
    "sessions": "list this command's sessions (this framework, configuration and folder), newest first",
    "connectors": "list the MCP servers' tools, with effects and approval rules",
    "frameworks": "list the frameworks the installed plugins offer, with their capabilities",
    "server": "status, start or stop the embedded Temporal dev server (status and stop: the resident workers too)",
    "payloads": "gc: delete the stored payloads of sessions that ended long ago",
    "codec-server": "decode encrypted payloads for the Temporal UI (/encode, /decode)",
    "worker": "serve this command's flow as a worker (one per host); --resident is the background worker chat and -p start and reuse",
    "serve": "the HTTP API over this command's sessions (and their worker), with a one-time login URL",
}

_EXAMPLES = {
    "chat": """\
  sessionflow --model demo                       # chat with the offline demo agent
  git diff | sessionflow -p "review this" --output-format json
  sessionflow -c -p "and the tests?"             # continue the latest session of this folder""",
    "init": """\
  sessionflow init                               # answer a few questions
  sessionflow init -f langgraph -y               # write the defaults for LangGraph
  sessionflow init --print-schema > schema.json""",
    "sessions": """\
  sessionflow sessions
  sessionflow -f langgraph sessions --state idle --since 12h
  sessionflow sessions --json | jq -r '.sessions[0].session_id'""",
    "connectors": """\
  sessionflow connectors
  sessionflow connectors --config ./team.yaml
  sessionflow connectors --json | jq '.connectors[].tools[].name'""",
    "frameworks": """\
  sessionflow frameworks
  sessionflow frameworks --json | jq -r '.[].name'""",
    "server": """\
  sessionflow server status
  sessionflow server start
  sessionflow server stop""",
    "payloads": """\
  sessionflow payloads gc                        # sessions that ended over 30 days ago
  sessionflow payloads gc --older-than 7d""",
    "codec-server": """\
  sessionflow codec-server --keys-file ~/.sessionflow/keys --token-file ~/.sessionflow/codec-token
  sessionflow codec-server --port 0 --ui-origin https://temporal.example.com""",
    "worker": """\
  sessionflow worker
  sessionflow worker -f openai-agents --config /etc/sessionflow/agent.yaml --grace 60""",
    "serve": """\
  sessionflow serve --model demo                 # prints a one-time login URL
  sessionflow serve --token-store tokens.json --issue-token alice
  sessionflow serve --host 0.0.0.0 --allow-remote --token-store tokens.json""",
}

_USAGE = "sessionflow [command] [options]"

_DESCRIPTION = (
    "Durable agent sessions on Temporal, in your terminal.\n\ncommands:\n"
    + "".join(f"  {name:<13} {line}\n" for name, line in _SUMMARIES.items())
    + """
Without a command, `sessionflow` chats (`sessionflow chat --help` lists its options:
-p/--prompt, -c/--continue, -r/--resume, -m/--model, --output-format, ...). Options may
come before the command: `sessionflow -f langgraph sessions`. Each command's `--help`
has examples.

exit codes: 0 success, 1 failure at run time, 2 usage or configuration error,
130 interrupted (Ctrl-C)
"""
)


def _add_framework(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-f", "--framework", default="builtin", help="the framework (default: builtin)")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="the configuration file (default: ~/.sessionflow/<framework>.yaml)",
    )


def _add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON for scripts instead of a table")


def _command(commands: _SubParsers, name: str) -> argparse.ArgumentParser:
    return commands.add_parser(
        name,
        prog=f"sessionflow {name}",
        description=f"{_SUMMARIES[name][0].upper()}{_SUMMARIES[name][1:]}.",
        epilog=f"examples:\n{_EXAMPLES[name]}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


if TYPE_CHECKING:
    _SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]  # pyright: ignore[reportPrivateUsage]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sessionflow",
        usage=_USAGE,
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    # The commands are listed once, in the description; argparse's own list is hidden.
    commands = parser.add_subparsers(dest="command", metavar="command", help=argparse.SUPPRESS)

    chat = _command(commands, "chat")
    _add_framework(chat)
    chat.add_argument(
        "-y", "--yes", action="store_true", help="write and use the defaults when there is no file"
    )
    which = chat.add_mutually_exclusive_group()
    which.add_argument(
        "-c",
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="continue the latest session of this framework, configuration and folder",
    )
    which.add_argument("-r", "--resume", metavar="ID", help="continue a session of this flow type")
    chat.add_argument(
        "-m", "--model", metavar="MODEL", help="override the configured model ('demo' runs offline)"
    )
    chat.add_argument(
        "-p",
        "--prompt",
        metavar="TEXT",
        nargs="?",
        const="-",
        help="send one message, print the answer, and exit; '-' or no TEXT reads standard input, "
        "and piped input is appended to TEXT",
    )
    chat.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default=None,
        help="with -p: text (the answer, the default), json (one object: answer, session_id, status, "
        "usage, tool calls) or stream-json (one JSON event per line)",
    )
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

    init = _command(commands, "init")
    _add_framework(init)
    init.add_argument("-y", "--yes", action="store_true", help="write the defaults without asking")
    init.add_argument("--print-schema", action="store_true", help="print the configuration's JSON Schema")

    sessions = _command(commands, "sessions")
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
    _add_json(sessions)

    connectors = _command(commands, "connectors")
    _add_framework(connectors)
    _add_json(connectors)

    frameworks = _command(commands, "frameworks")
    _add_json(frameworks)

    server = _command(commands, "server")
    server.add_argument("action", choices=("status", "start", "stop"))
    _add_framework(server)

    payloads = _command(commands, "payloads")
    payloads.add_argument("action", choices=("gc",))
    payloads.add_argument(
        "--older-than", default="30d", metavar="AGE", help="sessions that ended this long ago (default: 30d)"
    )
    _add_framework(payloads)

    codec = _command(commands, "codec-server")
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
    worker = _command(commands, "worker")
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
    serve = _command(commands, "serve")
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
    serve.add_argument(
        "--temporal-ui",
        metavar="URL",
        help="the Temporal UI's address (e.g. http://localhost:8233): the console links each session there",
    )
    return parser


def _option_arity(parser: argparse.ArgumentParser) -> dict[str, int | str | None]:
    """Every option of every command, with its `nargs` (0 for a flag, "?" for an optional value)."""
    parsers = [parser]
    for action in parser._actions:
        choices: object = action.choices  # the commands' parsers, by name
        if isinstance(choices, dict):
            parsers += [
                each
                for each in cast("dict[str, object]", choices).values()
                if isinstance(each, argparse.ArgumentParser)
            ]
    arity: dict[str, int | str | None] = {}
    for each in parsers:
        for action in each._actions:
            for option in action.option_strings:
                arity.setdefault(option, action.nargs)
    return arity


def _unknown_word(word: str) -> str:
    """The usage error for a word where a command goes: never a message sent silently."""
    import difflib

    if word.split() != [word]:
        return (
            f"a message goes after -p: sessionflow -p {shlex.quote(word)} (or run `sessionflow` "
            "and type it in the chat)"
        )
    starting = [name for name in COMMANDS if len(word) >= 3 and name.startswith(word)]
    close = starting if len(starting) == 1 else difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    if close:
        return f"unknown command {word!r} — did you mean {close[0]!r}?"
    return (
        f"unknown command {word!r} (commands: {', '.join(COMMANDS)}); to send it as a message: "
        f"sessionflow -p {shlex.quote(word)}"
    )


def arrange(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """The arguments with the command first: options may come before it, `chat` is the default.

    The first word that is neither an option nor an option's value must be a command; it
    moves to the front, so `sessionflow -f langgraph sessions` is `sessionflow sessions -f
    langgraph`. Any other word there is a usage error (exit 2), never a message: a word like a
    command names the command it is probably meant as, a message is told to go after -p.
    """
    args = list(argv)
    if not args or args[0] in COMMANDS or args[0] in ("-h", "--help", "--version"):
        return args or ["chat"]
    arity = _option_arity(parser)
    index = 0
    while index < len(args):
        token = args[index]
        if token == "--":
            break
        if token.startswith("-") and token != "-":
            takes = arity.get(token, 0)  # an unknown option: argparse will say so
            if "=" in token or takes == 0 or (not token.startswith("--") and len(token) > 2):
                index += 1
            elif takes == "?":
                following = args[index + 1] if index + 1 < len(args) else None
                index += (
                    2 if following is not None and (following == "-" or not following.startswith("-")) else 1
                )
            else:
                index += 2
            continue
        if token in COMMANDS:
            return [token, *args[:index], *args[index + 1 :]]
        parser.error(_unknown_word(token))
    return ["chat", *args]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(arrange(sys.argv[1:] if argv is None else argv, parser))
    _without_httpx_cli()
    from rich.console import Console

    from sessionflow_cli._errors import EXIT_INTERRUPTED, CliError

    out = Console(highlight=False, soft_wrap=True)
    info = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        return run(args, out=out, info=info)
    except CliError as error:
        info.print(f"error: {error.message}", style="red", markup=False, highlight=False, soft_wrap=True)
        return error.exit_code
    except KeyboardInterrupt:
        info.print("Interrupted.", style="yellow")
        return EXIT_INTERRUPTED


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
