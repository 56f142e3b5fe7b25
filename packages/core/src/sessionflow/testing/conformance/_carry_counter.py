"""The carry of a conformance case: a counter of completed turns that the next turn's model sees."""

from __future__ import annotations

from dataclasses import dataclass

from sessionflow.testing.conformance._case_files import Node

__all__ = ["CarryCounter", "parse_carry_counter"]


@dataclass(frozen=True, kw_only=True)
class CarryCounter:
    """A `CarryHook`: each completed turn carries ``"<label>: <n>"``, n one more than the carry it got.

    The value is the hook's own, never in any message, so a model request shows it only if
    the carry reached the step; and n counts up only if each turn got the previous carry.
    An answer containing ``reset_when`` carries nothing (the carry is cleared).
    """

    label: str
    reset_when: str | None = None

    def __call__(self, previous: str | None, answer: str) -> str | None:
        if self.reset_when is not None and self.reset_when in answer:
            return None
        prefix = f"{self.label}: "
        count = previous.removeprefix(prefix) if previous is not None else ""
        return f"{prefix}{int(count) + 1 if previous is not None and count.isdigit() else 1}"


def parse_carry_counter(node: Node) -> CarryCounter:
    fields = node.object(required=("label",), optional=("reset_when",))
    return CarryCounter(
        label=fields["label"].string(),
        reset_when=fields["reset_when"].string() if "reset_when" in fields else None,
    )
