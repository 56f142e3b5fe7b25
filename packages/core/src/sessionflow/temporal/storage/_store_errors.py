"""The error a payload store raises: it names the store and the cause."""

from __future__ import annotations

from typing import Any

from sessionflow.session.errors import SessionRunError

__all__ = ["PayloadStoreError"]


class PayloadStoreError(SessionRunError):
    """The payload store could not be used. A step that meets it fails and is retried."""

    def __init__(self, store: str, problem: str, cause: BaseException | None = None) -> None:
        self._detail = f"{problem}{_reason(cause)}"
        super().__init__(f"payload store ({store}) {self._detail}")
        self.store = store

    def __reduce__(self) -> tuple[Any, ...]:
        # The constructor takes (store, problem, cause), not the formatted text in `args`;
        # the cause travels as the text it became.
        return (type(self), (self.store, self._detail))


def _reason(cause: BaseException | None) -> str:
    """The cause and its innermost cause, on one short line.

    Raised `from None`: a chained traceback would travel with the step's failure, and the
    server refuses a failure of over 4 KB.
    """
    if cause is None:
        return ""
    text = f": {type(cause).__name__}: {cause}"
    root = cause
    while root.__cause__ is not None:
        root = root.__cause__
    if root is not cause:
        text += f" (caused by {type(root).__name__}: {root})"
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 3] + "..."


_MAX_REASON = 1024
