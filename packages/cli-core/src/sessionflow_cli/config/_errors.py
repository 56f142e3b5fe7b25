"""`ConfigError`: a configuration file or session settings that the rules reject."""

from __future__ import annotations

from collections.abc import Iterable

from sessionflow import UserError

__all__ = ["ConfigError", "json_pointer"]


def json_pointer(path: Iterable[str | int]) -> str:
    """The JSON Pointer (RFC 6901) of a path of keys and indexes; the root is ``""``."""
    parts = [str(part).replace("~", "~0").replace("/", "~1") for part in path]
    return "".join(f"/{part}" for part in parts)


class ConfigError(UserError):
    """A rejected value: `code` names the rule and `pointer` the place.

    The message is ``<code> at "<pointer>"``, followed by the detail in parentheses, such
    as ``schema at "/local_tools/shell/allow" (schema keyword type)``.

    Attributes:
        code: The rule that rejected it: ``schema``, ``yaml``, ``unreadable``,
            ``missing_file``, ``missing_directory``, ``conflict``, ``duplicate``,
            ``widens``, ``model_not_allowed`` or ``invalid`` (a value the core refuses).
        pointer: JSON Pointer of the rejected value in the file or the settings.
        detail: What exactly is wrong, for people.
        keyword: The JSON Schema keyword that failed, for ``schema`` errors.
        hint: More text for people, printed after the summary.
        source: The file or the settings the error is about, when known.
    """

    def __init__(
        self,
        code: str,
        pointer: str,
        detail: str = "",
        *,
        keyword: str | None = None,
        hint: str | None = None,
        source: str | None = None,
    ) -> None:
        self.code = code
        self.pointer = pointer
        self.detail = detail
        self.keyword = keyword
        self.hint = hint
        self.source = source
        super().__init__(self.summary)

    @property
    def summary(self) -> str:
        text = f'{self.code} at "{self.pointer}"'
        return f"{text} ({self.detail})" if self.detail else text

    def __str__(self) -> str:
        return f"{self.summary}: {self.hint}" if self.hint else self.summary

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.code, self.pointer, self.detail, self.keyword, self.hint, self.source))


def _rebuild(
    code: str, pointer: str, detail: str, keyword: str | None, hint: str | None, source: str | None
) -> ConfigError:
    return ConfigError(code, pointer, detail, keyword=keyword, hint=hint, source=source)
