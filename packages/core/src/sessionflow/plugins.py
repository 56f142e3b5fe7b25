"""The plugin system: framework adapters register themselves through pluggy.

Plugins are found three ways, in this order:

1. Built-in plugins named in `DEFAULT_PLUGINS` (module paths, always imported).
2. Installed distributions that declare an entry point in the ``sessionflow`` group.
3. Plugins registered in code with `SessionflowPlugins.register` (tests, embedding apps).

Environment variables control discovery (read by `SessionflowPlugins.load`):

* ``SESSIONFLOW_LOAD_PLUGINS``: comma list of entry-point names or module paths. When set
  (and not blank), only these are loaded instead of every installed entry point; names
  that are not entry points are imported as modules and registered under their path.
  The list is an explicit request, so it is honoured even when autoload is off.
* ``SESSIONFLOW_DISABLED_PLUGINS``: comma list of plugin names (entry-point names,
  module paths, or inline names) that are never registered.
* ``SESSIONFLOW_DISABLE_PLUGIN_AUTOLOAD``: when truthy, installed entry points are not
  loaded. It wins over ``load(autoload=True)`` so an operator can always switch off
  third-party code.

Every error a plugin causes is a `PluginError` whose message names that plugin.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import pluggy

from sessionflow import hookspecs
from sessionflow._environment import read_env
from sessionflow.kit._frameworks import FrameworkSpec, HarnessContext
from sessionflow.session.errors import UserError
from sessionflow.session.runner import AgentFrameworkRunner, is_runner

__all__ = [
    # Discovery and its switches
    "DEFAULT_PLUGINS",
    "DISABLED_PLUGINS_ENV",
    "DISABLE_AUTOLOAD_ENV",
    "ENTRY_POINT_GROUP",
    "LOAD_PLUGINS_ENV",
    # The manager
    "PluginInfo",
    "PluginSource",
    "SessionflowPlugins",
    "build_runner",
    "get_plugins",
    "reset_plugins",
    # Its errors
    "PluginError",
    "UnknownFrameworkError",
]

ENTRY_POINT_GROUP = hookspecs.PROJECT_NAME
LOAD_PLUGINS_ENV = "SESSIONFLOW_LOAD_PLUGINS"
DISABLED_PLUGINS_ENV = "SESSIONFLOW_DISABLED_PLUGINS"
DISABLE_AUTOLOAD_ENV = "SESSIONFLOW_DISABLE_PLUGIN_AUTOLOAD"

DEFAULT_PLUGINS: tuple[str, ...] = ("sessionflow.builtin._plugin",)
"""Module paths of the built-in plugins, imported and registered by every `load`."""

PluginSource = Literal["builtin", "entry_point", "module", "inline"]
"""How a plugin was registered: `DEFAULT_PLUGINS`, an entry point, a module path named
in ``SESSIONFLOW_LOAD_PLUGINS``, or `SessionflowPlugins.register`."""

_FALSY = frozenset({"", "0", "false", "no", "off"})


# --------------------------------------------------------------------------- errors


class PluginError(UserError):
    """A plugin failed to load, broke a hook contract, or asked for something missing.

    Attributes:
        plugin: The name of the plugin at fault, or None when no single plugin is.
        reason: The message without the plugin prefix.
    """

    def __init__(self, plugin: str | None, message: str) -> None:
        super().__init__(f"plugin {plugin!r}: {message}" if plugin is not None else message)
        self.plugin = plugin
        self.reason = message

    def __reduce__(self) -> tuple[Any, ...]:
        # The constructor takes (plugin, message), not the formatted text in `args`.
        return (type(self), (self.plugin, self.reason))


class UnknownFrameworkError(PluginError, KeyError):
    """No loaded plugin provides the requested framework; also a `KeyError`."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        listed = ", ".join(available) if available else "none (is the plugin that provides it installed?)"
        super().__init__(None, f"unknown framework {name!r}; available frameworks: {listed}")
        self.name = name
        self.available = tuple(available)

    def __str__(self) -> str:
        # KeyError would print the repr of the message, quotes and all.
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.available))


# --------------------------------------------------------------------------- building


def build_runner(framework: FrameworkSpec, context: HarnessContext) -> AgentFrameworkRunner:
    """Build ``framework``'s runner for ``context``, checking what the plugin returned.

    Raises:
        PluginError: ``build_runner`` raised or returned something that is not an
            `AgentFrameworkRunner`; the message names the plugin and the framework.
    """
    plugin = framework.plugin_name or None
    try:
        runner = framework.build_runner(context)
    except Exception as exc:
        raise PluginError(
            plugin, f"framework {framework.name!r} failed to build its runner: {exc!r}"
        ) from exc
    if not is_runner(runner):
        raise PluginError(
            plugin,
            f"framework {framework.name!r}: build_runner returned {type(runner).__name__}, "
            "which does not implement AgentFrameworkRunner",
        )
    return runner


# --------------------------------------------------------------------------- manager


@dataclass(frozen=True, kw_only=True)
class PluginInfo:
    """One registered plugin, for listings.

    Attributes:
        name: The registered name (entry-point name, module path, or inline name).
        source: How it was registered.
        distribution: The installed distribution it came from, when known.
        version: That distribution's version, when known.
    """

    name: str
    source: PluginSource
    distribution: str | None = None
    version: str | None = None


class SessionflowPlugins:
    """A typed wrapper around the pluggy plugin manager of project ``sessionflow``.

    Create one, call `load`, then ask for `frameworks`. Most code uses the process-wide
    instance from `get_plugins`; tests build their own and `register` inline plugins.
    """

    def __init__(self) -> None:
        self._pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._pm.add_hookspecs(hookspecs)
        self._loaded = False
        self._sources: dict[str, PluginSource] = {}
        # Entry-point plugins' distributions by plugin name. Their name and version are read
        # by `list_plugins` only: each read parses the distribution's METADATA file.
        self._distributions: dict[str, importlib.metadata.Distribution] = {}
        self._frameworks: dict[str, FrameworkSpec] | None = None

    @property
    def pluggy_manager(self) -> pluggy.PluginManager:
        """The underlying pluggy manager, for hooks this wrapper does not cover yet."""
        return self._pm

    @property
    def loaded(self) -> bool:
        return self._loaded

    # ------------------------------------------------------------------ loading

    def load(self, *, autoload: bool | None = None) -> None:
        """Register built-in plugins and discover installed ones. Later calls do nothing.

        Args:
            autoload: False skips installed entry points. None or True loads them unless
                ``SESSIONFLOW_DISABLE_PLUGIN_AUTOLOAD`` is truthy. An explicit
                ``SESSIONFLOW_LOAD_PLUGINS`` list replaces autoload either way.

        Raises:
            PluginError: A plugin failed to import, has an invalid or unknown hook
                implementation, or a listed name is neither an entry point nor a module.
                A failed load may be retried; plugins registered so far stay registered.
        """
        if self._loaded:
            return
        for name in _env_list(DISABLED_PLUGINS_ENV):
            self._pm.set_blocked(name)
        # Read at call time so a later addition (or a test's monkeypatch) takes effect.
        for module_name in DEFAULT_PLUGINS:
            self._register_module(module_name, source="builtin")
        explicit = _env_list(LOAD_PLUGINS_ENV)
        if explicit:
            self._load_listed(explicit)
        elif autoload is not False and not _env_flag(DISABLE_AUTOLOAD_ENV):
            self._load_entry_points(None)
        self._check_pending()
        self._loaded = True
        self._frameworks = None

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register an inline plugin (a module, class or instance with ``@hookimpl`` functions).

        Args:
            plugin: The plugin object.
            name: Its name; defaults to pluggy's canonical name (``__name__`` or the id).

        Returns:
            The registered name, or None when the name is blocked.

        Raises:
            PluginError: The name or object is already registered, or a hook
                implementation is invalid or matches no hook spec. The manager is left
                unchanged.
        """
        registered = self._register(plugin, name, source="inline")
        if registered is not None:
            self._check_pending()
        return registered

    def unregister(self, name: str) -> object | None:
        """Unregister a plugin by name; returns the plugin object, or None if absent."""
        plugin = self._pm.unregister(name=name)
        self._sources.pop(name, None)
        self._distributions.pop(name, None)
        self._frameworks = None
        return plugin

    def _register(self, plugin: object, name: str | None, *, source: PluginSource) -> str | None:
        plugin_name = name or self._pm.get_canonical_name(plugin)
        if self._pm.has_plugin(plugin_name):
            raise PluginError(plugin_name, "a plugin with this name is already registered")
        existing = self._pm.get_name(plugin)
        if existing is not None:
            raise PluginError(plugin_name, f"this plugin object is already registered as {existing!r}")
        try:
            registered = self._pm.register(plugin, name=plugin_name)
        except pluggy.PluginValidationError as exc:
            raise PluginError(plugin_name, f"invalid hook implementation: {exc}") from exc
        if registered is None:
            return None  # blocked by SESSIONFLOW_DISABLED_PLUGINS or set_blocked
        self._sources[registered] = source
        self._frameworks = None
        return registered

    def _register_module(self, module_name: str, *, source: PluginSource, hint: str = "") -> None:
        # Skip the import too: a disabled plugin's module may be the thing that is broken.
        if self._pm.is_blocked(module_name) or self._pm.has_plugin(module_name):
            return
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            missing_itself = exc.name is not None and (
                module_name == exc.name or module_name.startswith(f"{exc.name}.")
            )
            detail = f"no module named {module_name!r}{hint}" if missing_itself else f"import failed: {exc!r}"
            raise PluginError(module_name, detail) from exc
        except Exception as exc:
            raise PluginError(module_name, f"import failed: {exc!r}") from exc
        self._register(module, module_name, source=source)

    def _entry_points(self) -> dict[str, importlib.metadata.EntryPoint]:
        found: dict[str, importlib.metadata.EntryPoint] = {}
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            other = found.get(ep.name)
            if other is None:
                found[ep.name] = ep
            elif _dist_name(other) != _dist_name(ep):
                # Picking one silently would make behaviour depend on sys.path order.
                raise PluginError(
                    ep.name,
                    f"entry point name is declared by two distributions: "
                    f"{_dist_name(other)!r} ({other.value}) and {_dist_name(ep)!r} ({ep.value})",
                )
        return found

    def _load_entry_points(self, names: Iterable[str] | None) -> None:
        entry_points = self._entry_points()
        for name in entry_points if names is None else names:
            if self._pm.has_plugin(name) or self._pm.is_blocked(name):
                continue
            ep = entry_points[name]
            # Loaded from the one scan of `_entry_points`, one name at a time so a failure
            # names its entry point. (pluggy's load_setuptools_entrypoints would read every
            # installed distribution's metadata again for each name: ~10 ms a plugin.)
            try:
                plugin = ep.load()
            except Exception as exc:
                raise PluginError(
                    name,
                    f"entry point {ep.value!r} of distribution {_dist_name(ep)!r} failed to load: {exc!r}",
                ) from exc
            if self._register(plugin, name, source="entry_point") is not None and ep.dist is not None:
                self._distributions[name] = ep.dist

    def _load_listed(self, names: Sequence[str]) -> None:
        entry_points = self._entry_points()
        for name in names:
            if name in entry_points:
                self._load_entry_points([name])
            else:
                available = ", ".join(sorted(entry_points)) or "none"
                hint = (
                    f"; {LOAD_PLUGINS_ENV} names must be entry points in group "
                    f"{ENTRY_POINT_GROUP!r} (installed: {available}) or importable modules"
                )
                self._register_module(name, source="module", hint=hint)

    def _check_pending(self) -> None:
        try:
            self._pm.check_pending()
        except pluggy.PluginValidationError as exc:
            name = self._pm.get_name(exc.plugin)
            unknown = sorted(
                caller.name for caller in self._pm.get_hookcallers(exc.plugin) or [] if not caller.has_spec()
            )
            if name is not None:
                # Leave the manager as it was before this plugin arrived.
                self.unregister(name)
            raise PluginError(name or repr(exc.plugin), _describe_unknown_hooks(unknown)) from exc

    # ------------------------------------------------------------------ queries

    def frameworks(self) -> dict[str, FrameworkSpec]:
        """All registered frameworks by name, each with `FrameworkSpec.plugin_name` set.

        Raises:
            PluginError: A hook implementation raised, returned a value, registered
                something that is not a `FrameworkSpec`, or registered a name another
                plugin already took (the message names both plugins).
        """
        if self._frameworks is None:
            self._frameworks = self._collect_frameworks()
        return dict(self._frameworks)

    def framework(self, name: str) -> FrameworkSpec:
        """The framework called ``name``.

        Raises:
            UnknownFrameworkError: No plugin provides it; the message lists those that exist.
        """
        frameworks = self.frameworks()
        try:
            return frameworks[name]
        except KeyError:
            raise UnknownFrameworkError(name, sorted(frameworks)) from None

    def plugin_names(self) -> list[str]:
        """Names of the registered plugins, sorted."""
        return sorted(name for name, plugin in self._pm.list_name_plugin() if plugin is not None)

    def list_plugins(self) -> list[PluginInfo]:
        """Registered plugins with how they were found and their distribution, sorted by name."""
        # Plugins loaded through the pluggy manager itself (`pluggy_manager`) are in its
        # distinfo, keyed by id: plugin objects need not be hashable.
        distributions = {
            id(plugin): (dist.project_name, str(dist.version))
            for plugin, dist in self._pm.list_plugin_distinfo()
        }
        infos: list[PluginInfo] = []
        for name, plugin in self._pm.list_name_plugin():
            if plugin is None:
                continue  # a blocked name
            source = self._sources.get(name, "inline")
            found = self._distributions.get(name)
            dist = (found.name, found.version) if found is not None else distributions.get(id(plugin))
            if dist is not None:
                infos.append(PluginInfo(name=name, source=source, distribution=dist[0], version=dist[1]))
            elif source == "builtin":
                infos.append(
                    PluginInfo(name=name, source=source, distribution="sessionflow", version=_own_version())
                )
            else:
                infos.append(PluginInfo(name=name, source=source))
        return sorted(infos, key=lambda info: info.name)

    def _collect_frameworks(self) -> dict[str, FrameworkSpec]:
        collected: dict[str, FrameworkSpec] = {}
        hook_name = "sessionflow_register_frameworks"
        caller = self._pm.hook.sessionflow_register_frameworks
        # Registration order (pluggy would call last-registered first): for duplicates,
        # the plugin that registered earlier keeps the name and the later one is blamed.
        for impl in caller.get_hookimpls():
            plugin_name = impl.plugin_name
            if impl.wrapper or impl.hookwrapper:
                raise PluginError(plugin_name, f"{hook_name} does not support wrapper implementations")
            register, close = self._framework_collector(plugin_name, collected)
            kwargs: dict[str, object] = {"register": register}
            try:
                result: object = impl.function(*(kwargs[arg] for arg in impl.argnames))
            except PluginError as exc:
                if exc.plugin == plugin_name:
                    raise  # raised by our register callback; already names the plugin
                raise PluginError(plugin_name, f"{hook_name} raised {exc!r}") from exc
            except Exception as exc:
                raise PluginError(plugin_name, f"{hook_name} raised {exc!r}") from exc
            finally:
                close()
            if inspect.iscoroutine(result):
                result.close()  # avoid a "never awaited" warning on top of the error
                raise PluginError(plugin_name, f"{hook_name} must be a plain function, not async")
            if result is not None:
                raise PluginError(
                    plugin_name,
                    f"{hook_name} returned {type(result).__name__}; call register(spec) instead of returning",
                )
        return collected

    @staticmethod
    def _framework_collector(
        plugin_name: str, collected: dict[str, FrameworkSpec]
    ) -> tuple[Callable[[object], None], Callable[[], None]]:
        closed = False

        def register(spec: object) -> None:
            if closed:
                raise PluginError(plugin_name, "register() was called after the hook returned")
            if not isinstance(spec, FrameworkSpec):
                raise PluginError(
                    plugin_name,
                    f"registered a {type(spec).__name__}, expected sessionflow.kit.FrameworkSpec",
                )
            existing = collected.get(spec.name)
            if existing is not None:
                raise PluginError(
                    plugin_name,
                    f"framework {spec.name!r} is already registered by plugin {existing.plugin_name!r}",
                )
            collected[spec.name] = replace(spec, plugin_name=plugin_name)

        def close() -> None:
            nonlocal closed
            closed = True

        return register, close


# --------------------------------------------------------------------------- process-wide instance

_instance: SessionflowPlugins | None = None
_instance_lock = threading.Lock()


def get_plugins() -> SessionflowPlugins:
    """The process-wide plugin manager, created and loaded on first use.

    Raises:
        PluginError: Loading failed; the next call tries again.
    """
    global _instance
    with _instance_lock:
        if _instance is None:
            plugins = SessionflowPlugins()
            plugins.load()
            _instance = plugins  # only cache a manager that loaded cleanly
        return _instance


def reset_plugins() -> None:
    """Forget the process-wide manager so the next `get_plugins` loads afresh (for tests)."""
    global _instance
    with _instance_lock:
        _instance = None


# --------------------------------------------------------------------------- helpers


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in read_env(name, "").split(",") if item.strip()]


def _env_flag(name: str) -> bool:
    return read_env(name, "").strip().lower() not in _FALSY


def _dist_name(ep: importlib.metadata.EntryPoint) -> str:
    dist = ep.dist
    return dist.name if dist is not None else "<unknown distribution>"


def _own_version() -> str | None:
    try:
        return importlib.metadata.version("sessionflow")
    except importlib.metadata.PackageNotFoundError:
        return None


def _describe_unknown_hooks(unknown: Sequence[str]) -> str:
    import difflib

    known = [name for name in vars(hookspecs) if name.startswith("sessionflow_")]
    parts: list[str] = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1)
        parts.append(f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name))
    listed = ", ".join(parts) or "(unknown)"
    return f"implements unknown hook {listed}; known hooks: {', '.join(sorted(known))}"
