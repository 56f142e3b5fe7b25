"""`-p/--prompt`: send one message without a terminal, print the answer, and exit.

Approvals are refused unless `--approve` names the tool; questions are declined.
Everything but the answer goes to standard error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Sequence
from typing import Literal

from sessionflow import AgentInterrupt
from sessionflow_cli._ask_user import DECLINED_MESSAGE, Question
from sessionflow_cli._command_host import Runtime
from sessionflow_cli._errors import EXIT_FAILURE, EXIT_OK, RuntimeFailure
from sessionflow_cli._local_tools import shell_sandbox_note, shell_tool_names
from sessionflow_cli.chat._follow import Decision, TurnFollower
from sessionflow_cli.chat._session import ChatSession
from sessionflow_cli.chat._view import ChatView

__all__ = ["ApproveRules", "refuse_waiting", "run_one_shot"]


class ApproveRules:
    """`--approve`: approve the named tools, refuse the others, decline questions."""

    def __init__(self, approve: Collection[str], view: ChatView) -> None:
        self.approve = approve
        self.view = view

    async def decide(self, interrupt: AgentInterrupt) -> Decision:
        if interrupt.tool_name in self.approve:
            self.view.note(f"approved by --approve {interrupt.tool_name}")
            return Decision(approved=True)
        self.view.note(f"refused: pass --approve {interrupt.tool_name} to approve it")
        return Decision(
            approved=False, reason=f"Not approved: {interrupt.tool_name} was not named with --approve."
        )

    async def ask(self, interrupt: AgentInterrupt, question: Question) -> str | Literal[False] | None:
        self.view.note(f"declined: {DECLINED_MESSAGE}")
        return None


async def refuse_waiting(runtime: Runtime, session_id: str, resume_hint: Callable[[str], str]) -> None:
    """Fail (exit 1) when an earlier turn of the session waits for an answer.

    The message would queue behind that turn, and nobody here answers it: `-p` answers the
    approvals of its own turn only. The chat shows the waiting approval and asks.
    """
    snapshot = await runtime.sessions.get_agent_snapshot(session_id)
    waiting = snapshot.pending_interrupts
    if waiting:
        what = "a question" if waiting[0].kind == "question" else f"the approval of {waiting[0].tool_name}"
        raise RuntimeFailure(
            f"session {session_id} waits for {what} in an earlier turn; answer it in the chat: "
            f"{resume_hint(session_id)}"
        )


async def run_one_shot(
    runtime: Runtime,
    view: ChatView,
    text: str,
    *,
    approve: Sequence[str],
    resume: str | None,
    resume_hint: Callable[[str], str],
) -> int:
    """Send `text`, follow the turn, print its answer; 1 when the turn fails."""
    session = await ChatSession.resume(runtime, resume) if resume is not None else ChatSession.new(runtime)
    try:
        if resume is not None:
            await refuse_waiting(runtime, resume, resume_hint)
        view.note(f"session {session.session_id}")
        sent = await session.send(text)
        link = session.link()
        if link is not None:
            view.note(f"Temporal Web UI: {link}")
        if not sent:
            view.line("not sent", "the session did not take the message", "red")
            return EXIT_FAILURE
        assert session.pump is not None
        follower = TurnFollower(
            runtime.sessions,
            session.session_id,
            session.pump,
            view,
            ApproveRules(set(approve), view),
            shell_note=shell_sandbox_note(runtime.config.local_tools.shell.sandbox),
            shell_tools=shell_tool_names(runtime.spec),
        )
        result = await runtime.watch(follower.follow(None))
        if result.outcome == "completed":
            view.out.print(result.answer, markup=False, highlight=False, soft_wrap=True)
            code = EXIT_OK
        else:
            code = EXIT_FAILURE
        view.note(f"Continue this session with: {resume_hint(session.session_id)}")
        return code
    except asyncio.CancelledError:  # Ctrl-C: the turn goes on in the session
        if session.exists:
            view.note(f"The session goes on; continue it with: {resume_hint(session.session_id)}")
        raise
    finally:
        await session.close()
