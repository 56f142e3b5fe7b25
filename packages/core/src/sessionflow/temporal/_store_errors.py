"""The error a payload store raises: it names the store and the cause."""

from __future__ import annotations

from sessionflow.session import SessionError

__all__ = ["PayloadStoreError"]


class PayloadStoreError(SessionError):
    """The payload store could not be used. A step that meets it fails and is retried."""

    def __init__(self, store: str, problem: str, cause: BaseException | None = None) -> None:
        reason = f": {type(cause).__name__}: {cause}" if cause is not None else ""
        super().__init__(f"payload store ({store}) {problem}{reason}")
        self.store = store
