"""Text matchers of case files: a string means "equals"; an object combines conditions."""

from __future__ import annotations

from dataclasses import dataclass

from sessionflow.testing.conformance._reader import Node

__all__ = ["TextMatch", "parse_text_match", "preview"]

_PREVIEW = 160


def preview(text: str | None) -> str:
    """A short repr of a possibly huge text, for failure messages."""
    if text is None:
        return "None"
    if len(text) <= _PREVIEW:
        return repr(text)
    return f"{text[:_PREVIEW]!r}... ({len(text)} characters)"


@dataclass(frozen=True, kw_only=True)
class TextMatch:
    """Conditions on one text; every condition given must hold."""

    equals: str | None = None
    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()
    startswith: str | None = None
    endswith: str | None = None
    length: int | None = None

    def failures(self, actual: str | None, what: str) -> list[str]:
        """Why ``actual`` does not match, one line per broken condition (empty when it matches)."""
        if actual is None:
            return [f"{what}: expected text, got None"]
        found: list[str] = []
        if self.equals is not None and actual != self.equals:
            found.append(f"{what}: expected {preview(self.equals)}, got {preview(actual)}")
        found += [
            f"{what}: expected to contain {s!r}, got {preview(actual)}"
            for s in self.contains
            if s not in actual
        ]
        found += [
            f"{what}: expected not to contain {s!r}, got {preview(actual)}"
            for s in self.not_contains
            if s in actual
        ]
        if self.startswith is not None and not actual.startswith(self.startswith):
            found.append(f"{what}: expected to start with {self.startswith!r}, got {preview(actual)}")
        if self.endswith is not None and not actual.endswith(self.endswith):
            found.append(f"{what}: expected to end with {self.endswith!r}, got {preview(actual)}")
        if self.length is not None and len(actual) != self.length:
            found.append(f"{what}: expected {self.length} characters, got {len(actual)}")
        return found


def _one_or_many(node: Node) -> tuple[str, ...]:
    if isinstance(node.value, str):
        return (node.string(),)
    return node.strings(min_items=1)


def parse_text_match(node: Node) -> TextMatch:
    """``"text"`` (equals) or ``{"equals"|"contains"|"not_contains"|"startswith"|"endswith"|"length"}``."""
    if isinstance(node.value, str):
        return TextMatch(equals=node.string(allow_empty=True))
    fields = node.object(optional=("equals", "contains", "not_contains", "startswith", "endswith", "length"))
    if not fields:
        raise node.error("a text matcher needs at least one condition")
    return TextMatch(
        equals=fields["equals"].string(allow_empty=True) if "equals" in fields else None,
        contains=_one_or_many(fields["contains"]) if "contains" in fields else (),
        not_contains=_one_or_many(fields["not_contains"]) if "not_contains" in fields else (),
        startswith=fields["startswith"].string() if "startswith" in fields else None,
        endswith=fields["endswith"].string() if "endswith" in fields else None,
        length=fields["length"].integer(minimum=0) if "length" in fields else None,
    )
