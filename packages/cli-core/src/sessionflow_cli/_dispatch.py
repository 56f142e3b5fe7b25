"""Run one parsed command: pick the framework and the configuration, then the command itself.

Each command's module is imported when it runs, and nothing else: `frameworks` loads
neither the configuration nor the engine (temporalio), `init` no engine, and only `chat`
and `sessions` the worker and the session client.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from sessionflow_cli._errors import EXIT_USAGE, RuntimeFailure, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from sessionflow.kit import FrameworkSpec

__all__ = ["dispatch"]


def _approved(values: list[str]) -> list[str]:
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def dispatch(args: argparse.Namespace, *, out: Console, info: Console, cwd: Path) -> int:
    command: str = args.command
    if command == "frameworks":
        from sessionflow_cli.commands._frameworks import run_frameworks

        return run_frameworks(out, as_json=args.json)
    if command == "codec-server":
        from sessionflow_cli.commands._codec_server import DEFAULT_UI_ORIGIN, run_codec_server

        def show(line: str) -> None:
            out.print(line, markup=False, highlight=False)
            out.file.flush()

        return run_codec_server(
            host=args.host,
            port=args.port,
            ui_origins=args.ui_origin or [DEFAULT_UI_ORIGIN],
            token_file=args.token_file,
            max_body_bytes=args.max_body_bytes,
            keys_file=args.keys_file,
            print_line=show,
        )
    from sessionflow.home import home_layout, tighten_home
    from sessionflow_cli.config import ConfigError

    # ~/.sessionflow (or the XDG folders) and what is in them: only their owner's (an older
    # sessionflow left them 0755/0644).
    for folder in home_layout().folders:
        tighten_home(folder)

    try:
        return _configured(command, args, out=out, info=info, cwd=cwd)
    except ConfigError as error:
        where = f"{error.source}: " if error.source else ""
        info.print(f"error: {where}{error}", style="red", markup=False, highlight=False, soft_wrap=True)
        return EXIT_USAGE


def _configured(command: str, args: argparse.Namespace, *, out: Console, info: Console, cwd: Path) -> int:
    from sessionflow_cli._frameworks import choose_framework

    spec = choose_framework(args.framework)
    if command == "init":
        from sessionflow_cli.commands._init import run_init

        return run_init(args.framework, args.config, yes=args.yes, print_schema=False, out=out, info=info)
    from sessionflow.temporal import DevServerError

    try:
        return _with_engine(command, spec, args, out=out, info=info, cwd=cwd)
    except DevServerError as error:
        raise RuntimeFailure(
            f"the Temporal dev server: {error} (run `sessionflow server stop` to stop the embedded one)"
        ) from None


def _with_engine(
    command: str, spec: FrameworkSpec, args: argparse.Namespace, *, out: Console, info: Console, cwd: Path
) -> int:
    import asyncio

    from sessionflow_cli._setup import resolve_config
    from sessionflow_cli.config import with_model

    if command == "server":
        from sessionflow_cli.commands._server import run_server

        config = resolve_config(spec.name, args.config, yes=False, ask=False, cwd=cwd, info=_quiet(info))
        return run_server(args.action, config, out)
    if command == "payloads":
        from sessionflow_cli.commands._payloads import run_payloads

        config = resolve_config(spec.name, args.config, yes=False, ask=False, cwd=cwd, info=_quiet(info))
        return asyncio.run(run_payloads(args.action, args.older_than, config, out))
    if command == "connectors":
        from sessionflow_cli.commands._connectors import run_connectors

        config = resolve_config(spec.name, args.config, yes=False, ask=False, cwd=cwd, info=_quiet(info))
        return asyncio.run(run_connectors(config, out=out, as_json=args.json))
    from sessionflow_cli._flow_types import start_environment

    if command == "sessions":
        from sessionflow_cli._sessions import SessionFilters
        from sessionflow_cli.commands._sessions import run_sessions

        config = resolve_config(spec.name, args.config, yes=False, ask=False, cwd=cwd, info=_quiet(info))
        config = with_model(config, args.model)
        environment = start_environment(config.identity, config.workspace)
        filters = SessionFilters.from_arguments(args.state, args.user, args.since)
        return asyncio.run(
            run_sessions(spec, config, environment, out=out, info=info, filters=filters, as_json=args.json)
        )
    if command == "worker":
        from sessionflow_cli.commands._worker import run_worker

        config = resolve_config(spec.name, args.config, yes=False, ask=False, cwd=cwd, info=info)
        config = with_model(config, args.model)
        environment = start_environment(config.identity, config.workspace)
        code = asyncio.run(
            run_worker(
                spec,
                config,
                environment,
                flow_type=args.flow_type,
                grace=args.grace,
                out=out,
                info=info,
                resident=args.resident,
            )
        )
        return code  # `main` leaves past the interpreter teardown (sessionflow.temporal._process_exit)
    if command == "serve":
        from sessionflow_cli.commands._serve import ServeRequest, run_serve

        config = resolve_config(spec.name, args.config, yes=False, ask=False, cwd=cwd, info=info)
        config = with_model(config, args.model)
        environment = start_environment(config.identity, config.workspace)
        request = ServeRequest(
            host=args.host,
            port=args.port,
            allow_remote=args.allow_remote,
            token_store=args.token_store,
            issue_token=args.issue_token,
            revoke_token=args.revoke_token,
            webhook_url=args.webhook_url,
            trusted_proxies=tuple(args.trusted_proxy),
            temporal_ui=args.temporal_ui,
        )
        return asyncio.run(run_serve(spec, config, environment, request, out=out, info=info))
    from sessionflow_cli._prompt import prompt_text
    from sessionflow_cli.commands._chat import ChatRequest, run_chat

    if args.output_format is not None and args.prompt is None:
        raise UsageError("--output-format goes with -p/--prompt (one message, then exit)")
    prompt = prompt_text(args.prompt)
    config = resolve_config(spec.name, args.config, yes=args.yes, ask=True, cwd=cwd, info=info)
    config = with_model(config, args.model)
    environment = start_environment(config.identity, config.workspace)
    request = ChatRequest(
        prompt=prompt,
        resume=args.resume,
        continue_latest=args.continue_latest,
        output_format=args.output_format or "text",
        approve=_approved(args.approve),
        config_given=args.config,
        model_given=args.model,
        in_process_worker=args.in_process_worker,
    )
    return asyncio.run(run_chat(spec, config, environment, request, out=out, info=info))


def _quiet(info: Console) -> Console:
    """A console that drops the notes of commands that only read the configuration."""
    from rich.console import Console

    return Console(stderr=True, quiet=True)
