"""The terminal chat: each line is a message; the agent's turn streams until it ends.

The message line keeps its history in ``~/.sessionflow/history`` (the state folder,
`sessionflow_cli.config.history_file`; 0600), so the up arrow recalls lines of earlier
runs too (the last `HISTORY_LINES`; a line typed with a leading space is not kept), and
Tab completes the slash commands, `/model`'s models and `/image`'s paths.
Answers to approvals and questions have a prompt of their own, kept out of that history.

A line typed while the agent works steers the turn: it joins the turn at its next model
step (shown as "(joins the turn)"), or starts the next turn when the turn takes no further
step; with a framework that does not take steered messages it is queued for the next turn.
Ctrl-C during a turn cancels it, a second Ctrl-C exits; Ctrl-C while idle, Ctrl-D and
``/exit`` exit too. Exiting never ends the session: the `--resume` line continues it.
Leaving with Ctrl-C exits with 130, as an interrupted command does; Ctrl-D and ``/exit`` with 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory

from sessionflow import AgentInterrupt
from sessionflow.home import open_private, private_dir, write_private
from sessionflow_cli._ask_user import Question
from sessionflow_cli._command_host import Runtime
from sessionflow_cli._errors import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK
from sessionflow_cli._images import ImageRejected, attach_image
from sessionflow_cli._local_tools import shell_sandbox_note, shell_tool_names
from sessionflow_cli.chat._follow import Decision, TurnFollower
from sessionflow_cli.chat._session import ChatSession, show_history
from sessionflow_cli.chat._typeahead import TypeAhead
from sessionflow_cli.chat._view import ChatView
from sessionflow_cli.config import ConfigError, history_file, resolve_turn

__all__ = ["COMMANDS", "SlashCompleter", "TerminalChat", "chat_history"]

COMMANDS = {
    "/help": "what you can type",
    "/image": "attach an image to the next message",
    "/model": "switch the model for the next messages",
    "/exit": "leave (the session stays)",
    "/quit": "leave (the session stays)",
}
"""The slash commands, with what each does (shown beside Tab's completions)."""

_HELP = (
    "Type a message and press Enter. /image <path> attaches an image to the next message, "
    "/model <name> switches the model for the next messages, /exit leaves. "
    "While the agent works, a line you type joins its turn; Ctrl-C cancels a running turn."
)


class _Exit(Exception):
    """The person asked to leave."""


class TerminalChat:
    """Chats with one session at this terminal."""

    def __init__(self, runtime: Runtime, view: ChatView, *, resume_hint: Callable[[str], str]) -> None:
        self.runtime = runtime
        self.view = view
        self.resume_hint = resume_hint
        self.prompts: PromptSession[str] = PromptSession(
            history=chat_history(),
            completer=SlashCompleter(lambda: runtime.config.allowed_models),
            complete_while_typing=False,
        )
        self.answers: PromptSession[str] = PromptSession(history=InMemoryHistory())
        self.images: list[str] = []
        self.settings: dict[str, Any] = {}
        self.session: ChatSession | None = None
        self.presses = 0
        self.interrupted = False
        """The person left with Ctrl-C: the command exits with 130."""
        self._sigint = asyncio.Event()
        self.typeahead = TypeAhead()
        self.sent_during_turn = False
        """A line typed during the turn was sent: it may start the next turn."""
        self.followed_turn = ""
        """The last turn followed to its end."""

    async def run(self, resume: str | None) -> int:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._sigint.set)
        try:
            code = await self._run(resume)
            return EXIT_INTERRUPTED if self.interrupted and code == EXIT_OK else code
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            if self.session is not None:
                await self.session.close()
                if self.session.exists:
                    self.view.note(
                        f"The session stays open. Continue it with: {self.resume_hint(self.session.session_id)}",
                        style="bold",
                    )

    async def _run(self, resume: str | None) -> int:
        if resume is not None:
            self.session = await ChatSession.resume(self.runtime, resume)
            snapshot = await self.session.snapshot()
            turns = snapshot.state.turn_count if snapshot.state is not None else 0
            self.view.note(
                f"Resuming session {resume} ({turns} turn{'' if turns == 1 else 's'}).", style="bold"
            )
            self._print_link()
            show_history(snapshot, self.view)
            if snapshot.state is not None and snapshot.state.turn_id is not None:
                if not await self._follow(snapshot.state.turn_id):
                    return EXIT_OK
        else:
            self.session = ChatSession.new(self.runtime)
            self.view.note(
                f"New session {self.session.session_id}; it starts with your first message.", style="bold"
            )
        self.view.note(_HELP)
        while True:
            try:
                line = await self.read_line("you> ", message_line=True)
            except KeyboardInterrupt:
                self.interrupted = True
                return EXIT_OK
            except (EOFError, _Exit):
                return EXIT_OK
            text = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                command = await self._command(text)
                if command == "exit":
                    return EXIT_OK
                continue
            if not await self._send(text):
                continue
            if not await self._follow(None):
                return EXIT_OK
            if not await self._follow_what_was_typed():
                return EXIT_OK
        return EXIT_FAILURE  # pragma: no cover (the loop only returns)

    # -- input -----------------------------------------------------------------------

    async def read_line(self, message: str, *, message_line: bool = False) -> str:
        """A line from the message prompt (history, completion), or from the answers' prompt."""
        self.view.quiet()
        self.view.end_line()
        prompts = self.prompts if message_line else self.answers
        try:
            with self.typeahead.set_aside():
                return await prompts.prompt_async(message, handle_sigint=False)
        finally:
            # prompt_toolkit may touch the SIGINT handling of the loop; keep ours.
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._sigint.set)
            self._sigint.clear()

    async def _command(self, text: str) -> Literal["exit", "done"]:
        name, _, rest = text.partition(" ")
        if name in ("/exit", "/quit"):
            return "exit"
        if name == "/image":
            self._attach(rest)
        elif name == "/model":
            self._switch_model(rest.strip())
        elif name == "/help":
            self.view.note(_HELP)
        else:
            self.view.line("unknown command", f"{name}; try /help", "yellow")
        return "done"

    def _attach(self, path: str) -> None:
        try:
            image = attach_image(
                path, cwd=Path.cwd(), media_folder=self.runtime.config.media_folder, already=len(self.images)
            )
        except ImageRejected as error:
            self.view.line("image not attached", str(error), "red")
            return
        self.images.append(str(image.stored))
        self.view.line("image attached", image.describe(), "green")

    def _switch_model(self, model: str) -> None:
        if not model:
            self.view.note(f"The model is {self.settings.get('model', self.runtime.config.model)}.")
            return
        try:
            resolve_turn(self.runtime.config, {**self.settings, "model": model})
        except ConfigError as error:
            self.view.line("model not changed", str(error), "red")
            return
        self.settings["model"] = model
        self.view.note(f"The next messages use the model {model}.")

    # -- turns -----------------------------------------------------------------------

    async def _send(self, text: str) -> bool:
        assert self.session is not None
        images = list(self.images)
        if images and not self.runtime.spec.capabilities.images:
            self.images.clear()
            self.view.line(
                "not sent", "this agent does not take images; the attached images are removed", "red"
            )
            return False
        first = not self.session.exists
        sent = await self.session.send(text, images=images, settings=self.settings or None)
        self.images.clear()
        if first:
            self._print_link()
        if not sent:
            self.view.line("not sent", "the session did not take the message", "red")
        return sent

    def _print_link(self) -> None:
        assert self.session is not None
        link = self.session.link()
        if link is not None:
            self.view.note(f"Session {self.session.session_id}: {link}")

    async def _follow(self, turn_id: str | None) -> bool:
        """Follow a turn to its end; False when the person asked to exit."""
        assert self.session is not None and self.session.pump is not None
        follower = TurnFollower(
            self.runtime.sessions,
            self.session.session_id,
            self.session.pump,
            self.view,
            _Responder(self),
            shell_note=shell_sandbox_note(self.runtime.config.local_tools.shell.sandbox),
            shell_tools=shell_tool_names(self.runtime.spec),
        )
        self.presses = 0
        self._sigint.clear()
        task = asyncio.create_task(follower.follow(turn_id))
        self.typeahead.start()
        typed = asyncio.create_task(self.typeahead.next_line())
        try:
            while True:
                pressed = asyncio.create_task(self._sigint.wait())
                done, _ = await asyncio.wait(
                    {task, pressed, typed, self.runtime.worker}, return_when=asyncio.FIRST_COMPLETED
                )
                if task in done:
                    pressed.cancel()
                    self.followed_turn = task.result().turn_id
                    return True
                if typed in done:
                    pressed.cancel()
                    await self._steer(typed.result())
                    typed = asyncio.create_task(self.typeahead.next_line())
                    continue
                if pressed not in done:
                    pressed.cancel()
                    self.runtime.check_worker()
                self._sigint.clear()
                await self.ctrl_c()
        except _Exit:
            return False
        finally:
            typed.cancel()
            self.typeahead.stop()
            self.view.quiet()
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    async def _steer(self, line: str) -> None:
        """A line typed while the agent works: it joins the turn (or waits for the next)."""
        assert self.session is not None
        text = line.strip()
        if not text:
            return
        if text.startswith("/"):
            self.view.note("Commands wait until the turn ends; type them at the next prompt.")
            return
        steers = self.runtime.spec.capabilities.steering
        # Attached images stay for the next message at the prompt: a steer is text only.
        sent = await self.session.send(
            text, settings=self.settings or None, double_texting="steer" if steers else "enqueue"
        )
        if not sent:
            self.view.line("not sent", "the session did not take the message", "red")
            return
        self.sent_during_turn = True
        shown = " ".join(text.split())
        self.view.line(
            "you", f"{shown} (joins the turn)" if steers else f"{shown} (queued for the next turn)", "cyan"
        )
        self.view.thinking()

    async def _follow_what_was_typed(self) -> bool:
        """Follow the turns that lines typed during a turn started; False when the person left.

        A line that steered a turn whose last model step had already started starts the
        next turn, as a queued line does: the chat follows it before the next prompt.
        """
        assert self.session is not None
        while self.sent_during_turn:
            self.sent_during_turn = False
            snapshot = await self.session.snapshot()
            state = snapshot.state
            followed = int(self.followed_turn.removeprefix("turn-") or 0)
            # A later turn started (it may have ended already: its events wait in the pump),
            # or one is about to start.
            later = state is not None and (state.turn_count > followed or state.turn_id is not None)
            if not later and not snapshot.queued_message_count:
                return True
            if not await self._follow(None):
                return False
        return True

    async def ctrl_c(self) -> None:
        """First press during a turn cancels it; the second asks to exit."""
        assert self.session is not None
        self.presses += 1
        if self.presses > 1:
            self.interrupted = True
            self.view.note("Leaving.", style="yellow")
            raise _Exit
        self.view.line("cancel", "cancelling the turn; press Ctrl-C again to exit", "yellow")
        self.runtime.check_worker()
        await self.runtime.sessions.cancel_turn(self.session.session_id)


HISTORY_LINES = 1000
"""Messages the history file keeps; older ones are dropped when a chat starts."""


def chat_history() -> History:
    """The message line's history, in the state folder; in memory when that cannot be written."""
    path = history_file()
    try:
        private_dir(path.parent, tighten_existing=False)
        os.close(open_private(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND))  # 0600 before the first line
        _keep_last(path, HISTORY_LINES)
    except OSError:
        return InMemoryHistory()
    return _MessageHistory(str(path))


def _keep_last(path: Path, count: int) -> None:
    """Drop all but the last `count` entries of a prompt_toolkit history file."""
    text = path.read_text(encoding="utf-8", errors="replace")
    # Each entry is a "# <time>" line and its "+<line>" lines, after an empty line.
    entries = text.split("\n\n# ")
    if len(entries) <= count + 1:
        return
    kept = entries[-count:]
    write_private(path, "\n# " + "\n\n# ".join(kept))


class _MessageHistory(FileHistory):
    """The history file, without the lines that leave (the up arrow never offers `/exit`)
    and without a line typed with a leading space (as shells do, for what should not stay)."""

    def append_string(self, string: str) -> None:
        if string.strip() in ("/exit", "/quit") or string.startswith(" "):
            return
        super().append_string(string)


class SlashCompleter(Completer):
    """Tab completes a slash command, then `/model`'s allowed models or `/image`'s path."""

    def __init__(self, models: Callable[[], Sequence[str]]) -> None:
        self.models = models
        self.paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/"):
            return
        command, space, rest = text.partition(" ")
        if not space:
            for name, meta in COMMANDS.items():
                if name.startswith(command):
                    yield Completion(name, start_position=-len(command), display_meta=meta)
            return
        argument = rest.lstrip()
        if command == "/model":
            for model in self.models():
                if model.startswith(argument):
                    yield Completion(model, start_position=-len(argument))
        elif command == "/image":
            yield from self.paths.get_completions(Document(argument), complete_event)


class _Responder:
    """Approvals and questions at the terminal."""

    def __init__(self, chat: TerminalChat) -> None:
        self.chat = chat

    async def _read(self, message: str) -> str | None:
        """A line, or None when Ctrl-C cancelled the turn instead."""
        try:
            return await self.chat.read_line(message)
        except KeyboardInterrupt:
            await self.chat.ctrl_c()
            return None
        except EOFError:
            raise _Exit from None

    async def decide(self, interrupt: AgentInterrupt) -> Decision:
        while True:
            reply = await self._read("approve? [y / n <reason>] ")
            if reply is None:
                return Decision(approved=None)
            word, _, reason = reply.strip().partition(" ")
            if word.lower() in ("y", "yes"):
                return Decision(approved=True)
            if word.lower() in ("n", "no"):
                return Decision(approved=False, reason=reason.strip() or None)
            self.chat.view.note("Answer y, or n with an optional reason.")

    async def ask(self, interrupt: AgentInterrupt, question: Question) -> str | Literal[False] | None:
        hint = "answer (or a number; empty declines)> " if question.choices else "answer (empty declines)> "
        reply = await self._read(hint)
        if reply is None:
            return False
        return reply.strip() or None
