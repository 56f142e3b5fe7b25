"""Errors the routes raise; each becomes a JSON ``{"error": code, "detail": text}`` response."""

from __future__ import annotations

__all__ = ["ApiError"]


class ApiError(Exception):
    def __init__(
        self, status: int, error: str, detail: str, *, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.error = error
        self.detail = detail
        self.headers = headers or {}
