"""The cases x frameworks matrix printed at the end of a run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Cell", "Matrix", "Outcome"]

Outcome = Literal["pass", "fail", "skip"]


@dataclass
class Cell:
    outcome: Outcome
    reason: str = ""

    def render(self) -> str:
        return f"skip({self.reason})" if self.outcome == "skip" and self.reason else self.outcome


@dataclass
class Matrix:
    """Outcomes by (case, framework); rows and columns keep the order they were announced in."""

    cases: list[str] = field(default_factory=lambda: [])
    frameworks: list[str] = field(default_factory=lambda: [])
    cells: dict[tuple[str, str], Cell] = field(default_factory=lambda: {})
    printed: bool = False

    def announce(self, case: str, framework: str) -> None:
        if case not in self.cases:
            self.cases.append(case)
        if framework not in self.frameworks:
            self.frameworks.append(framework)

    def record(self, case: str, framework: str, outcome: Outcome, reason: str = "") -> None:
        """Record one phase's outcome; a failure is never overwritten by a later pass."""
        self.announce(case, framework)
        current = self.cells.get((case, framework))
        if current is not None and current.outcome == "fail":
            return
        self.cells[(case, framework)] = Cell(outcome, reason)

    def lines(self) -> list[str]:
        """The table: one row per case, one column per framework; ``-`` marks a cell that did not run."""
        header = ["case", *self.frameworks]
        rows = [
            [
                case,
                *(
                    self.cells[(case, fw)].render() if (case, fw) in self.cells else "-"
                    for fw in self.frameworks
                ),
            ]
            for case in self.cases
        ]
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

        def fmt(row: list[str]) -> str:
            return "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()

        lines = [fmt(header), fmt(["-" * w for w in widths])]
        lines += [fmt(row) for row in rows]
        totals = {o: sum(1 for c in self.cells.values() if c.outcome == o) for o in ("pass", "fail", "skip")}
        lines.append(f"{totals['pass']} passed, {totals['fail']} failed, {totals['skip']} skipped")
        return lines
