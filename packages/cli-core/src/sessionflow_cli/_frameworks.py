"""The frameworks the installed plugins offer (``sessionflow`` entry points); adapters are never imported by name."""

from __future__ import annotations

from sessionflow.kit import FrameworkSpec
from sessionflow.plugins import PluginError, SessionflowPlugins, get_plugins
from sessionflow_cli._errors import RuntimeFailure, UsageError

__all__ = ["DEFAULT_FRAMEWORK", "all_frameworks", "choose_framework"]

DEFAULT_FRAMEWORK = "builtin"


def all_frameworks() -> dict[str, FrameworkSpec]:
    """Every registered framework by name (`get_plugins`: built-in plugins and entry points)."""
    try:
        return get_plugins().frameworks()
    except PluginError as error:
        raise RuntimeFailure(f"a plugin failed to load: {error}") from None


def _without_entry_points(name: str) -> FrameworkSpec | None:
    # The built-in plugins (and an explicit SESSIONFLOW_LOAD_PLUGINS list) answer without
    # importing every installed adapter, some of which import their SDK when loaded.
    plugins = SessionflowPlugins()
    try:
        plugins.load(autoload=False)
        return plugins.frameworks().get(name)
    except PluginError:
        return None


def choose_framework(name: str) -> FrameworkSpec:
    """The framework called `name`; an unknown one is a usage error listing those there are."""
    spec = _without_entry_points(name)
    if spec is not None:
        return spec
    frameworks = all_frameworks()
    spec = frameworks.get(name)
    if spec is None:
        listed = ", ".join(sorted(frameworks)) or "none"
        raise UsageError(f"unknown framework {name!r}; available: {listed} (see `sessionflow frameworks`)")
    return spec
