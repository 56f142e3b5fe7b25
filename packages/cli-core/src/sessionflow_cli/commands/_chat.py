"""`sessionflow chat` (the default command): the terminal chat, or one message with `-p`."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console

from sessionflow.kit import FrameworkSpec
from sessionflow_cli._command_host import open_runtime
from sessionflow_cli._errors import UsageError
from sessionflow_cli._flow_types import StartEnvironment
from sessionflow_cli._setup import has_terminal
from sessionflow_cli.chat._oneshot import run_one_shot
from sessionflow_cli.chat._view import ChatView
from sessionflow_cli.config import CliConfig, default_config_path

__all__ = ["ChatRequest", "run_chat"]


@dataclass(frozen=True, kw_only=True)
class ChatRequest:
    prompt: str | None
    resume: str | None
    approve: Sequence[str]
    config_given: str | None
    model_given: str | None
    in_process_worker: bool = False


def _resume_hint(spec: FrameworkSpec, config: CliConfig, request: ChatRequest) -> str:
    words = ["sessionflow", "chat"]
    if spec.name != "builtin":
        words += ["-f", spec.name]
    if config.path is not None and config.path != default_config_path(spec.name).resolve():
        words += ["-c", str(config.path)]
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

    async with open_runtime(
        spec,
        config,
        environment,
        info=info,
        in_process=request.in_process_worker,
        config_given=request.config_given,
        model_given=request.model_given,
    ) as runtime:
        if request.prompt is not None:
            view = ChatView(out, info, stream=False, spinner=False)
            return await run_one_shot(
                runtime,
                view,
                request.prompt,
                approve=request.approve,
                resume=request.resume,
                resume_hint=hint,
            )
        # The terminal chat (prompt_toolkit) only at a terminal: `-p` starts without it.
        from sessionflow_cli.chat._terminal import TerminalChat

        view = ChatView(out, out)
        return await TerminalChat(runtime, view, resume_hint=hint).run(request.resume)
