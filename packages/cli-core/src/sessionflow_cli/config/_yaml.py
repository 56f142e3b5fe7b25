"""Round-trip YAML with ruamel.yaml: comments and key order survive a read and a write."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from sessionflow_cli.config._errors import ConfigError

__all__ = ["dump_document", "parse_document", "plain", "write_document", "write_text"]


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def parse_document(text: str, *, source: str) -> Any:
    """The round-trip document of `text`; a syntax error is `ConfigError` code ``yaml``."""
    try:
        return _yaml().load(text)  # pyright: ignore[reportUnknownMemberType]
    except MarkedYAMLError as error:
        raise ConfigError("yaml", "", _describe(error), source=source) from None
    except YAMLError as error:
        raise ConfigError("yaml", "", str(error).splitlines()[0], source=source) from None


def _describe(error: MarkedYAMLError) -> str:
    details: Any = error
    mark: Any = details.problem_mark or details.context_mark
    where = f"line {int(mark.line) + 1} column {int(mark.column) + 1}: " if mark is not None else ""
    return f"{where}{details.problem or details.context}"


def plain(value: Any) -> Any:
    """A round-trip value as plain JSON types (dict, list, str, int, float, bool, None)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in cast(Mapping[Any, Any], value).items()}
    if isinstance(value, list):
        return [plain(v) for v in cast(list[Any], value)]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def dump_document(document: Any) -> str:
    buffer = io.StringIO()
    _yaml().dump(document, buffer)  # pyright: ignore[reportUnknownMemberType]
    return buffer.getvalue()


def write_document(path: Path, document: Any) -> None:
    """Write the document to `path`; comments and key order survive."""
    write_text(path, dump_document(document))


def write_text(path: Path, text: str) -> None:
    """Write next to `path` and rename over it, so a reader never sees half a file; the
    file is 0600 and a folder it creates 0700 (`sessionflow.home.write_private`)."""
    from sessionflow.home import write_private

    write_private(path, text)
