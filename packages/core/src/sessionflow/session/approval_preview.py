"""What an approval shows beside the arguments, so a person can judge the call anywhere.

The preview is made on the worker, in the model step that proposed the call, because only
the worker sees the workspace the tool would change (a client may be a browser on another
machine). It is recorded with the call, so every client shows the same preview, and a
reload or a late client still sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["MAX_PREVIEW_CHARS", "ApprovalPreview", "PreviewKind", "bounded_preview"]

PreviewKind = Literal["diff", "command", "json"]

MAX_PREVIEW_CHARS = 32_000
"""Characters of preview text recorded; the rest is folded into a last line saying how many
lines were left out. The preview rides in the history with the call, so it is bounded."""


@dataclass(frozen=True, kw_only=True)
class ApprovalPreview:
    """How the call reads for a person.

    Attributes:
        kind: ``"diff"``: `text` is a unified diff of the file the call changes (lines
            start with ``---``, ``+++``, ``@@``, ``+``, ``-`` or a space); ``"command"``:
            `text` is the shell command; ``"json"``: `text` is the arguments, indented.
        summary: One short line: ``new file``, ``overwrites 12 lines``, ``edits 3 lines``,
            or why no diff could be made (``the file is larger than 1 MB``); may be empty.
        text: The preview itself, at most `MAX_PREVIEW_CHARS`.
    """

    kind: PreviewKind
    summary: str = ""
    text: str = ""


def bounded_preview(preview: ApprovalPreview) -> ApprovalPreview:
    """`preview` with its text cut at a line end under `MAX_PREVIEW_CHARS`, saying what was cut."""
    if len(preview.text) <= MAX_PREVIEW_CHARS:
        return preview
    kept = preview.text[:MAX_PREVIEW_CHARS]
    cut_at = kept.rfind("\n")
    kept = kept[: cut_at if cut_at > 0 else MAX_PREVIEW_CHARS]
    left = preview.text[len(kept) :].count("\n") + 1
    return ApprovalPreview(kind=preview.kind, summary=preview.summary, text=f"{kept}\n… {left} more lines")
