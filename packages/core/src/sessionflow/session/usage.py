"""Token and request accounting."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AgentUsage"]


@dataclass(frozen=True, kw_only=True)
class AgentUsage:
    """Usage of one model call, or the sum over a session."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: AgentUsage) -> AgentUsage:
        return AgentUsage(
            requests=self.requests + other.requests,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )
