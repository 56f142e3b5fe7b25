"""Run one parsed command: pick the framework and the configuration, then the command itself."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from rich.console import Console

from sessionflow.temporal import DevServerError
from sessionflow_cli._errors import RuntimeFailure
from sessionflow_cli._flow_types import start_environment
from sessionflow_cli._frameworks import choose_framework
from sessionflow_cli._setup import resolve_config
from sessionflow_cli.commands import (
    ChatRequest,
    run_chat,
    run_connectors,
    run_frameworks,
    run_init,
    run_payloads,
    run_server,
    run_sessions,
)
from sessionflow_cli.config import with_model

__all__ = ["dispatch"]


def _approved(values: list[str]) -> list[str]:
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def dispatch(args: argparse.Namespace, *, out: Console, info: Console, cwd: Path) -> int:
    command: str = args.command
    try:
        return _dispatch(command, args, out=out, info=info, cwd=cwd)
    except DevServerError as error:
        raise RuntimeFailure(
            f"the Temporal dev server: {error} (run `sessionflow server stop` to stop the embedded one)"
        ) from None


def _dispatch(command: str, args: argparse.Namespace, *, out: Console, info: Console, cwd: Path) -> int:
    if command == "frameworks":
        return run_frameworks(out)
    if command == "init":
        choose_framework(args.framework)
        return run_init(args.framework, args.config, yes=args.yes, print_schema=False, out=out, info=info)
    spec = choose_framework(args.framework)
    if command == "server":
        config = resolve_config(spec.name, args.config, yes=False, ask=False, cwd=cwd, info=_quiet(info))
        return run_server(args.action, config, out)
    if command == "payloads":
        config = resolve_config(spec.name, args.config, yes=False, ask=False, cwd=cwd, info=_quiet(info))
        return asyncio.run(run_payloads(args.action, args.older_than, config, out))
    if command == "connectors":
        config = resolve_config(spec.name, args.config, yes=False, ask=False, cwd=cwd, info=_quiet(info))
        return asyncio.run(run_connectors(config, out=out))
    if command == "sessions":
        config = resolve_config(spec.name, args.config, yes=False, ask=False, cwd=cwd, info=_quiet(info))
        config = with_model(config, args.model)
        environment = start_environment(config.identity, config.workspace)
        return asyncio.run(run_sessions(spec, config, environment, out=out, info=info))
    config = resolve_config(spec.name, args.config, yes=args.yes, ask=True, cwd=cwd, info=info)
    config = with_model(config, args.model)
    environment = start_environment(config.identity, config.workspace)
    request = ChatRequest(
        prompt=args.prompt,
        resume=args.resume,
        approve=_approved(args.approve),
        config_given=args.config,
        model_given=args.model,
    )
    return asyncio.run(run_chat(spec, config, environment, request, out=out, info=info))


def _quiet(info: Console) -> Console:
    """A console that drops the notes of commands that only read the configuration."""
    return Console(stderr=True, quiet=True)
