"""Hook specifications of the sessionflow plugin system (pluggy project ``sessionflow``).

A plugin is a module or an object with functions marked ``@hookimpl`` whose names match
the specs below. Installed distributions announce plugins through the ``sessionflow``
entry-point group::

    [project.entry-points.sessionflow]
    myframework = "my_package.sessionflow_plugin"

Every hook takes a ``register`` callback instead of returning values. The plugin manager
calls each implementation with its own callback, so it always knows which plugin
contributed what and can name that plugin in errors.

Hooks today:

* ``sessionflow_register_frameworks``: agent frameworks the CLI and the conformance suite
  can run.

New hooks (for example ``sessionflow_register_tool_sources``) follow the same shape: a
``sessionflow_`` prefix, one ``register`` callback parameter, no return value. Adding a hook
never breaks an existing plugin, because implementations only see the hooks they define.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from sessionflow.kit._frameworks import FrameworkSpec

# `hookimpl` is public in `sessionflow.kit`, beside what a plugin registers.
__all__ = ["PROJECT_NAME", "hookspec", "sessionflow_register_frameworks"]

PROJECT_NAME = "sessionflow"
"""The pluggy project name; also the entry-point group plugins are discovered in."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    """Register the agent frameworks this plugin provides.

    Call ``register`` once per framework. Framework names are unique across all loaded
    plugins; registering a name another plugin already took is an error naming both.

    Example::

        from sessionflow.kit import FrameworkCapabilities, FrameworkSpec, hookimpl

        @hookimpl
        def sessionflow_register_frameworks(register):
            register(FrameworkSpec(name="myframework", ...))

    Args:
        register: Records one `FrameworkSpec`. Raises `PluginError` for anything that is
            not a `FrameworkSpec` or for a duplicate name.
    """
