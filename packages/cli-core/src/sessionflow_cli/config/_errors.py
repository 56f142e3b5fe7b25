"""`ConfigError`: a configuration file or session settings that the rules reject."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sessionflow import UserError

__all__ = ["ConfigError", "Problem", "json_pointer"]


def json_pointer(path: Iterable[str | int]) -> str:
    """The JSON Pointer (RFC 6901) of a path of keys and indexes; the root is ``""``."""
    parts = [str(part).replace("~", "~0").replace("/", "~1") for part in path]
    return "".join(f"/{part}" for part in parts)


@dataclass(frozen=True, kw_only=True)
class Problem:
    """One thing wrong in a file: where (JSON Pointer, and line and column when known) and what.

    Attributes:
        code: The rule, as `ConfigError.code`; ``unknown_key`` for a key no schema names.
        pointer: JSON Pointer of the value (of the key itself, for an unknown key).
        message: What is wrong, for people.
        keyword: The JSON Schema keyword that failed, for schema problems.
        line: 1-based line in the YAML file, when known.
        column: 1-based column in the YAML file, when known.
    """

    code: str
    pointer: str
    message: str
    keyword: str | None = None
    line: int | None = None
    column: int | None = None

    @property
    def where(self) -> str:
        place = f'"{self.pointer}"'
        return (
            f"line {self.line}, column {self.column}, at {place}" if self.line is not None else f"at {place}"
        )

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


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
        problems: Every problem found, in file order (the first error's alone when
            nothing else was collected); more than one make the message list them all.
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
        problems: tuple[Problem, ...] = (),
    ) -> None:
        self.code = code
        self.pointer = pointer
        self.detail = detail
        self.keyword = keyword
        self.hint = hint
        self.source = source
        self.problems = problems
        super().__init__(self.summary)

    @property
    def summary(self) -> str:
        text = f'{self.code} at "{self.pointer}"'
        return f"{text} ({self.detail})" if self.detail else text

    def __str__(self) -> str:
        if len(self.problems) > 1:
            listed = "".join(f"\n  {problem}" for problem in self.problems)
            return f"{len(self.problems)} problems:{listed}"
        text = f"{self.summary}: {self.hint}" if self.hint else self.summary
        if len(self.problems) == 1:
            problem = self.problems[0]
            if problem.code == "unknown_key":
                return str(problem)
            if problem.line is not None:
                return f"{text} (line {problem.line}, column {problem.column})"
        return text

    def as_json(self) -> dict[str, object]:
        """The error as plain JSON types, for machine-readable output: the first problem's
        code, pointer and detail, the file, and every problem with its line and column."""
        problems = self.problems or (
            Problem(
                code=self.code, pointer=self.pointer, message=self.hint or self.detail, keyword=self.keyword
            ),
        )
        return {
            "code": self.code,
            "pointer": self.pointer,
            "detail": self.detail,
            "source": self.source,
            "problems": [
                {
                    "code": p.code,
                    "pointer": p.pointer,
                    "message": p.message,
                    "keyword": p.keyword,
                    "line": p.line,
                    "column": p.column,
                }
                for p in problems
            ],
        }

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild,
            (self.code, self.pointer, self.detail, self.keyword, self.hint, self.source, self.problems),
        )


def _rebuild(
    code: str,
    pointer: str,
    detail: str,
    keyword: str | None,
    hint: str | None,
    source: str | None,
    problems: tuple[Problem, ...] = (),
) -> ConfigError:
    return ConfigError(code, pointer, detail, keyword=keyword, hint=hint, source=source, problems=problems)
