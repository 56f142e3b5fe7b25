"""Which frameworks the suite plays, and which cases each can run."""

from __future__ import annotations

from collections.abc import Sequence

from sessionflow.plugins import FrameworkSpec, SessionflowPlugins
from sessionflow.testing.conformance._cases import Capability, ConformanceCase

__all__ = ["discover_frameworks", "missing_capability", "skip_reason"]


def discover_frameworks(names: Sequence[str] = ()) -> list[FrameworkSpec]:
    """Frameworks registered through `SessionflowPlugins` (built-ins plus entry points).

    Discovery honours ``SESSIONFLOW_LOAD_PLUGINS``, ``SESSIONFLOW_DISABLED_PLUGINS`` and
    ``SESSIONFLOW_DISABLE_PLUGIN_AUTOLOAD``, exactly as the worker children do.

    Args:
        names: Restrict to these frameworks, in this order; empty means all, sorted by name.

    Raises:
        UnknownFrameworkError: A name is not registered; the message lists those that are.
        PluginError: A plugin failed to load.
    """
    plugins = SessionflowPlugins()
    plugins.load()
    if names:
        return [plugins.framework(name) for name in dict.fromkeys(names)]
    found = plugins.frameworks()
    return [found[name] for name in sorted(found)]


def missing_capability(case: ConformanceCase, framework: FrameworkSpec) -> Capability | None:
    """The first capability ``case`` needs that ``framework`` declares it lacks."""
    return next((c for c in case.requires if not getattr(framework.capabilities, c)), None)


def skip_reason(framework: FrameworkSpec, capability: Capability) -> str:
    return f"framework {framework.name!r} declares no {capability!r} capability"
