"""Errors the routes raise; each becomes a JSON ``{"error": code, "detail": text}`` response."""

from __future__ import annotations

from sessionflow import SessionError

__all__ = ["ApiError"]


class ApiError(SessionError):
    """An HTTP error response: its status, its error code and the detail the client reads."""

    def __init__(
        self, status: int, error: str, detail: str, *, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail
        self.headers = headers or {}
