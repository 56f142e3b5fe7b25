"""`sessionflow chat` (the default command): the terminal chat, or one message with `-p`."""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Literal

from rich.console import Console

from sessionflow.kit import FrameworkSpec
from sessionflow_cli._command_host import Runtime, open_runtime
from sessionflow_cli._errors import RuntimeFailure, UsageError
from sessionflow_cli._flow_types import StartEnvironment
from sessionflow_cli._sessions import latest_open_session
from sessionflow_cli._setup import has_terminal
from sessionflow_cli.chat._oneshot import run_one_shot
from sessionflow_cli.chat._view import ChatView
from sessionflow_cli.config import CliConfig, default_config_path

__all__ = ["ChatRequest", "OutputFormat", "run_chat"]

OutputFormat = Literal["text", "json", "stream-json"]
"""`--output-format` of `-p` (Claude Code's names)."""


@dataclass(frozen=True, kw_only=True)
class ChatRequest:
    prompt: str | None
    """The message of `-p` (its argument and piped input, `sessionflow_cli._prompt`)."""
    resume: str | None
    approve: Sequence[str]
    config_given: str | None
    model_given: str | None
    continue_latest: bool = False
    """`-c/--continue`: the latest open session of this flow type (framework, file, folder)."""
    output_format: OutputFormat = "text"
    in_process_worker: bool = False


def _resume_hint(spec: FrameworkSpec, config: CliConfig, request: ChatRequest) -> str:
    words = ["sessionflow", "chat"]
    if spec.name != "builtin":
        words += ["-f", spec.name]
    if config.path is not None and config.path != default_config_path(spec.name).resolve():
        words += ["--config", str(config.path)]
    if request.model_given is not None:
        words += ["-m", request.model_given]
    return shlex.join(words)


async def run_chat(
    spec: FrameworkSpec,
    config: CliConfig,
    environment: StartEnvironment,
    request: ChatRequest,
    *,
    out: Console,
    info: Console,
) -> int:
    if request.prompt is None and not has_terminal():
        raise UsageError("the chat needs a terminal; pass -p/--prompt to send one message without one")

    def hint(session_id: str) -> str:
        return f"{_resume_hint(spec, config, request)} -r {session_id}"

    one_shot = request.prompt is not None
    with _answers_only_on_stdout(out) if one_shot else contextlib.nullcontext(out) as answers:
        return await _run(spec, config, environment, request, hint, out=answers, info=info)


async def _run(
    spec: FrameworkSpec,
    config: CliConfig,
    environment: StartEnvironment,
    request: ChatRequest,
    hint: Callable[[str], str],
    *,
    out: Console,
    info: Console,
) -> int:
    async with open_runtime(
        spec,
        config,
        environment,
        info=info,
        in_process=request.in_process_worker,
        config_given=request.config_given,
        model_given=request.model_given,
    ) as runtime:
        resume = request.resume
        if request.continue_latest:
            resume = await _latest(runtime, spec)
            info.print(f"Continuing the latest session of this folder: {resume}", highlight=False)
        if request.prompt is not None:
            view = ChatView(out, info, stream=False, spinner=False, workspace=config.workspace)
            if request.output_format != "text":
                from sessionflow_cli.chat._structured import run_one_shot_structured

                return await run_one_shot_structured(
                    runtime,
                    view,
                    request.prompt,
                    request.output_format,
                    approve=request.approve,
                    resume=resume,
                    resume_hint=hint,
                )
            return await run_one_shot(
                runtime,
                view,
                request.prompt,
                approve=request.approve,
                resume=resume,
                resume_hint=hint,
            )
        # The terminal chat (prompt_toolkit) only at a terminal: `-p` starts without it.
        from sessionflow_cli.chat._terminal import TerminalChat

        view = ChatView(out, out, workspace=config.workspace)
        return await TerminalChat(runtime, view, resume_hint=hint).run(resume)


async def _latest(runtime: Runtime, spec: FrameworkSpec) -> str:
    """`--continue`'s session; none is a failure (exit 1) that says how to start one."""
    session_id = await latest_open_session(runtime.sessions)
    if session_id is None:
        where = runtime.environment.workspace
        raise RuntimeFailure(
            f"no session to continue: framework {spec.name!r} has no open session in {where} "
            f"(flow type {runtime.flow_type}); start one with `sessionflow"
            f"{'' if spec.name == 'builtin' else ' -f ' + spec.name}` or list them with `sessionflow sessions`"
        )
    return session_id


@contextlib.contextmanager
def _answers_only_on_stdout(out: Console) -> Generator[Console]:
    """A console on standard output for `-p`'s answer alone; whatever else writes to fd 1 goes to stderr.

    Temporal's core (Rust, in the worker and client threads) writes its warnings to the
    process's standard output, where a line would break a script that reads the answer or the
    JSON. While `-p` runs, fd 1 is a copy of standard error, and the answer is written to a
    copy of the real standard output. When standard output is no file descriptor (an
    embedding that replaced ``sys.stdout``), `out` is used as it is.
    """
    try:
        sys.stdout.flush()
        real = sys.stdout.fileno() == 1
    except (OSError, ValueError):
        real = False
    if not real:
        yield out
        return
    saved = os.dup(1)
    os.dup2(2, 1)
    stream = os.fdopen(saved, "w", encoding=sys.stdout.encoding, errors="replace", closefd=False)
    try:
        yield Console(file=stream, highlight=False, soft_wrap=True)
    finally:
        stream.flush()
        os.dup2(saved, 1)
        os.close(saved)
