"""How a chat looks: streamed text, `[tool]` lines, approvals, questions, and the spinner.

Everything printed that came from the model or a tool (text, arguments, results, error
messages) passes through `terminal_safe` first: a file name, a page or a command's
output could otherwise send escape sequences to the terminal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.status import Status
from rich.text import Text

from sessionflow_cli.chat._approval import approval_view, rewrite_lines
from sessionflow_local_tools import terminal_safe

__all__ = ["ChatView", "render_arguments"]

_ARGUMENT_LIMIT = 400
_STYLES = {
    "header": "bold",
    "hunk": "cyan",
    "added": "green",
    "removed": "red",
    "context": "",
    "note": "dim",
    "command": "bold",
    "json": "",
}


def render_arguments(arguments: str, limit: int = _ARGUMENT_LIMIT) -> str:
    """Compact one-line JSON arguments, shortened for the terminal."""
    try:
        parsed: Any = json.loads(arguments or "{}")
        text = json.dumps(parsed, ensure_ascii=False, separators=(", ", ": "))
    except ValueError:
        text = " ".join(arguments.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ChatView:
    """Writes the chat. `out` gets the agent's text; `info` everything about the session.

    With `stream` off (one-shot runs) the agent's text is not written as it arrives; the
    caller prints the answer at the end.
    """

    def __init__(
        self,
        out: Console,
        info: Console,
        *,
        stream: bool = True,
        spinner: bool = True,
        workspace: Path | None = None,
    ) -> None:
        self.out = out
        self.info = info
        self.stream = stream
        self.workspace = workspace
        """The workspace whose files an approval of a write diffs against."""
        self._spinner_on = spinner and info.is_terminal and not info.is_dumb_terminal
        self._status: Status | None = None
        self._shown: dict[str, str] = {}
        self._mid_line = False

    # -- spinner ---------------------------------------------------------------------

    def thinking(self) -> None:
        if self._spinner_on and self._status is None and not self._mid_line:
            self._status = self.info.status("thinking...", spinner="dots")
            self._status.start()

    def quiet(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    # -- text ------------------------------------------------------------------------

    def show_text(self, turn_id: str, text: str) -> None:
        """Show the turn's live text; a retried attempt replaces what the earlier one wrote."""
        if not self.stream:
            return
        shown = self._shown.get(turn_id, "")
        if text == shown:
            return
        self.quiet()
        if text.startswith(shown):
            self._write(text[len(shown) :])
        else:
            self.end_line()
            self.info.print("[retry] the model call restarted; its text so far is replaced:", style="yellow")
            self._write(text)
        self._shown[turn_id] = text

    def streamed(self, turn_id: str) -> str:
        return self._shown.get(turn_id, "")

    def _write(self, text: str) -> None:
        text = terminal_safe(text)
        if not text:
            return
        self.out.file.write(text)
        self.out.file.flush()
        self._mid_line = not text.endswith("\n")

    def end_line(self) -> None:
        if self._mid_line:
            self.out.file.write("\n")
            self.out.file.flush()
            self._mid_line = False

    def answer(self, text: str) -> None:
        """Print a whole answer (when nothing was streamed)."""
        self.quiet()
        self.end_line()
        self.out.print(Text(terminal_safe(text)))

    # -- lines -----------------------------------------------------------------------

    def line(self, tag: str, text: str, style: str) -> None:
        self.quiet()
        self.end_line()
        line = Text()
        line.append(f"[{tag}]", style=f"bold {style}")
        line.append(f" {terminal_safe(text)}")
        self.info.print(line, soft_wrap=True)

    def tool_started(self, name: str, arguments: str) -> None:
        self.line("tool", f"{name} {render_arguments(arguments)}", "cyan")

    def tool_finished(self, name: str, status: str, detail: str | None) -> None:
        extra = f": {detail}" if detail else ""
        style = "green" if status == "succeeded" else "red"
        self.line("tool", f"{name} {status}{extra}", style)

    def approval(self, name: str, arguments: str, previous: str | None = None) -> None:
        """``[approval] <tool> <subject>``, then what the call would do: a diff of a write
        against the current file, a shell command as ``$ command``, else indented JSON.
        ``previous``: the arguments before a rewrite, shown first as a diff."""
        view = approval_view(name, arguments, self.workspace)
        self.line("approval", view.title, "magenta")
        lines = (*rewrite_lines(previous, arguments), *view.lines) if previous is not None else view.lines
        for item in lines:
            self.info.print(Text(item.text, style=_STYLES[item.kind]), soft_wrap=True, highlight=False)

    def question(self, text: str, choices: list[str]) -> None:
        self.line("question", text, "magenta")
        for index, choice in enumerate(choices, start=1):
            self.info.print(Text(f"  {index}. {terminal_safe(choice)}"), highlight=False)

    def note(self, text: str, style: str = "dim") -> None:
        self.quiet()
        self.end_line()
        self.info.print(Text(terminal_safe(text), style=style), soft_wrap=True)
