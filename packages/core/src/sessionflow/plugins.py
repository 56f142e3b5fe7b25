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

import difflib
import importlib
import importlib.metadata
import inspect
import os
import re
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

import pluggy

from sessionflow import hookspecs
from sessionflow._demo_tour import DemoTool, DemoTour
from sessionflow.session import (
    AgentFrameworkRunner,
    AgentSessionOptions,
    DeferredToolExecution,
    SessionError,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.temporal import AgentSessionFlow

__all__ = [
    "DEFAULT_PLUGINS",
    "DISABLED_PLUGINS_ENV",
    "DISABLE_AUTOLOAD_ENV",
    "ENTRY_POINT_GROUP",
    "LOAD_PLUGINS_ENV",
    "MODEL_APIS",
    "ConformanceAgentSpec",
    "DemoTool",
    "DemoTour",
    "FrameworkCapabilities",
    "FrameworkSpec",
    "HarnessContext",
    "ModelApi",
    "PluginError",
    "PluginInfo",
    "PluginSource",
    "SessionflowPlugins",
    "ToolHandler",
    "ToolInvocation",
    "ToolSpec",
    "UnknownFrameworkError",
    "effect_from_mcp_annotations",
    "get_plugins",
    "reset_plugins",
]

ENTRY_POINT_GROUP = hookspecs.PROJECT_NAME
LOAD_PLUGINS_ENV = "SESSIONFLOW_LOAD_PLUGINS"
DISABLED_PLUGINS_ENV = "SESSIONFLOW_DISABLED_PLUGINS"
DISABLE_AUTOLOAD_ENV = "SESSIONFLOW_DISABLE_PLUGIN_AUTOLOAD"

DEFAULT_PLUGINS: tuple[str, ...] = ("sessionflow.builtin._plugin",)
"""Module paths of the built-in plugins, imported and registered by every `load`."""

ModelApi = Literal["chat_completions", "responses", "anthropic_messages"]
"""The model wire APIs: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages."""

MODEL_APIS: tuple[ModelApi, ...] = get_args(ModelApi)

PluginSource = Literal["builtin", "entry_point", "module", "inline"]
"""How a plugin was registered: `DEFAULT_PLUGINS`, an entry point, a module path named
in ``SESSIONFLOW_LOAD_PLUGINS``, or `SessionflowPlugins.register`."""

_FRAMEWORK_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
_FALSY = frozenset({"", "0", "false", "no", "off"})


# --------------------------------------------------------------------------- errors


class PluginError(SessionError):
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


# --------------------------------------------------------------------------- tools


@dataclass(frozen=True, kw_only=True)
class ToolInvocation:
    """Facts about one run of a tool, handed to its handler.

    Attributes:
        tool_call_id: The model's ID for the call.
        idempotency_key: Equal on every attempt of this call; pass it to the system the
            tool writes to so a retried write is applied once.
        attempt: 1 on the first run, higher on retries.
        session_id: The session (workflow) ID.
        turn_id: The turn that made the call.
        tool_name: The tool's name as the model called it.
        session_settings: Settings of the turn that made the call; a tool authorizes
            its call again against them on the worker that runs it.
        answer: The person's answer given with the approval, for question tools.
    """

    tool_call_id: str
    idempotency_key: str
    attempt: int
    session_id: str = ""
    turn_id: str = ""
    tool_name: str = ""
    session_settings: Mapping[str, Any] = field(default_factory=lambda: {})
    answer: str | None = None

    @classmethod
    def from_deferred(cls, call: DeferredToolExecution) -> ToolInvocation:
        """The invocation for a deferred tool call the session is running."""
        return cls(
            tool_call_id=call.tool_call.tool_call_id,
            idempotency_key=call.idempotency_key,
            attempt=call.attempt,
            session_id=call.flow_id,
            turn_id=call.turn_id,
            tool_name=call.tool_call.tool_name,
            session_settings=call.session_settings,
            answer=call.tool_call.answer,
        )


ToolHandler = Callable[[dict[str, Any], ToolInvocation], Awaitable[str] | str]
"""Runs a tool: parsed JSON arguments and the invocation in, model-visible text out."""


def effect_from_mcp_annotations(annotations: Mapping[str, Any] | None) -> ToolEffect:
    """Map MCP tool annotations to a `ToolEffect`.

    ``readOnlyHint`` gives READ; otherwise ``idempotentHint`` gives IDEMPOTENT_WRITE;
    everything else is UNCLASSIFIED. A hint only counts when it is literally ``true``:
    hints come from tool servers we do not control, so a missing, false or malformed
    hint must never make a tool look safer to retry. ``destructiveHint: false`` alone
    stays UNCLASSIFIED because "not destructive" does not mean "safe to repeat".

    Args:
        annotations: The ``annotations`` object of an MCP tool, or None.
    """
    if not annotations:
        return ToolEffect.UNCLASSIFIED
    if annotations.get("readOnlyHint") is True:
        return ToolEffect.READ
    if annotations.get("idempotentHint") is True:
        return ToolEffect.IDEMPOTENT_WRITE
    return ToolEffect.UNCLASSIFIED


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """A framework-neutral tool: what the CLI harness and the conformance suite hand an adapter.

    Attributes:
        name: The name the model calls the tool by.
        description: Shown to the model.
        parameters: JSON schema of the arguments; its ``type`` must be ``"object"``.
        effect: The tool's effect as framework metadata, or None to derive it from
            ``mcp_annotations`` (see `framework_effect`).
        policy: An explicit policy for this tool. It wins over ``effect``; harnesses put
            it into `AgentSessionOptions.tool_policies`.
        handler: Runs the tool; may be sync or async.
        mcp_annotations: MCP ``annotations`` of the tool, when it came from an MCP server.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    effect: ToolEffect | None
    policy: ToolPolicy | None
    handler: ToolHandler
    mcp_annotations: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.name.strip():
            raise ValueError("tool name must not be empty")
        if self.parameters.get("type") != "object":
            raise ValueError(
                f"tool {self.name!r}: parameters must be a JSON schema with type 'object', "
                f"got type {self.parameters.get('type')!r}"
            )

    @property
    def framework_effect(self) -> ToolEffect | None:
        """`effect` if set, else the effect a true MCP hint implies, else None.

        None lets the session's `default_tool_effect` decide: an MCP tool with neither
        `readOnlyHint` nor `idempotentHint` says nothing about its effect.
        """
        if self.effect is not None:
            return self.effect
        if self.mcp_annotations is not None:
            effect = effect_from_mcp_annotations(self.mcp_annotations)
            return None if effect is ToolEffect.UNCLASSIFIED else effect
        return None

    async def call(self, arguments: dict[str, Any], invocation: ToolInvocation) -> str:
        """Run the handler, awaiting it if it is async, and check it returned text."""
        result = self.handler(arguments, invocation)
        text = await result if inspect.isawaitable(result) else result
        # Handlers are plugin or user code; check the promise the type hints make.
        return _checked_text(self.name, text)


# --------------------------------------------------------------------------- frameworks


@dataclass(frozen=True, kw_only=True)
class FrameworkCapabilities:
    """What an adapter supports; the conformance suite skips scenarios it cannot run.

    Attributes:
        parallel_tool_calls: One model response may request several tool calls.
        reasoning_deltas: Streams reasoning/thinking text as events.
        images: Implements `SupportsImageMessages`.
        mcp_annotations: Reads MCP tool annotations into tool effects.
    """

    parallel_tool_calls: bool
    reasoning_deltas: bool
    images: bool
    mcp_annotations: bool


@dataclass(frozen=True, kw_only=True)
class HarnessContext:
    """Everything the CLI gives a framework to build the runner of one session flow.

    Attributes:
        flow_type: The flow type (workflow type and task queue) being built.
        model: The model name as the framework expects it.
        system_prompt: Instructions for the agent, or None.
        workspace: Directory the agent's file tools work in.
        options: Session options of the flow.
        tools: Neutral tool specs the adapter must expose to its agent.
        settings: The framework's own section of the CLI configuration.
        model_base_url: Overrides the model provider's base URL (proxies, test servers).
        api_key: Overrides the provider API key; never shown in the repr.
    """

    flow_type: str
    model: str
    system_prompt: str | None
    workspace: Path
    options: AgentSessionOptions
    tools: Sequence[ToolSpec]
    settings: Mapping[str, Any]
    model_base_url: str | None = None
    # Kept out of the repr so logging a context never leaks the key.
    api_key: str | None = field(default=None, repr=False)


@dataclass(frozen=True, kw_only=True)
class ConformanceAgentSpec:
    """The neutral agent the conformance suite asks an adapter to build for one conversation.

    Attributes:
        model_base_url: Base URL of the scripted model server for this conversation.
        model: The model name to send.
        api: The wire API to speak, or None for the framework's `FrameworkSpec.model_api`.
        system_prompt: Instructions for the agent, or None.
        tools: The tools the agent gets.
    """

    model_base_url: str
    model: str
    api: ModelApi | None = None
    system_prompt: str | None
    tools: Sequence[ToolSpec]


@dataclass(frozen=True, kw_only=True)
class FrameworkSpec:
    """One agent framework a plugin provides.

    Attributes:
        name: Unique lowercase identifier (``^[a-z][a-z0-9_-]*$``), used on the command line.
        description: One line for listings.
        capabilities: What the adapter supports.
        build_runner: Builds the runner of a session flow from the CLI's context.
        build_conformance_runner: Builds the runner the conformance suite drives.
        model_api: The wire API the framework speaks by default.
        resume_texts: User text the framework itself adds to a model request that resumes
            after tool results (a harness's "continue" prompt). It is not the person's text,
            so the conformance suite leaves it out when it reads a request's last user text.
        replaced_local_tool_groups: Groups of the sessionflow CLI's local tools (``files``,
            ``shell``, ``web_fetch``, ``browser``) that the framework's own tools replace;
            the CLI does not offer its tools of these groups to this framework.
        demo_tour: The framework's own tools for the CLI's offline demo, for a framework
            that replaces the CLI's ``files`` tools; None tours with the CLI's file tools.
        plugin_name: The plugin that registered this spec; filled in by the plugin manager.
    """

    name: str
    description: str
    capabilities: FrameworkCapabilities
    build_runner: Callable[[HarnessContext], AgentFrameworkRunner]
    build_conformance_runner: Callable[[ConformanceAgentSpec], AgentFrameworkRunner]
    model_api: ModelApi
    resume_texts: tuple[str, ...] = ()
    replaced_local_tool_groups: frozenset[str] = frozenset()
    demo_tour: DemoTour | None = None
    plugin_name: str = ""

    def __post_init__(self) -> None:
        if not _FRAMEWORK_NAME.match(self.name):
            raise ValueError(
                f"framework name {self.name!r} must match {_FRAMEWORK_NAME.pattern} "
                "(lowercase letters, digits, '_' and '-', starting with a letter)"
            )
        if not self.description.strip():
            raise ValueError(f"framework {self.name!r}: description must not be empty")
        if "\n" in self.description or "\r" in self.description:
            raise ValueError(f"framework {self.name!r}: description must be one line")
        if any(not text.strip() for text in self.resume_texts):
            raise ValueError(f"framework {self.name!r}: resume_texts must not contain blank text")
        if self.model_api not in MODEL_APIS:
            raise ValueError(
                f"framework {self.name!r}: model_api {self.model_api!r} is not one of {', '.join(MODEL_APIS)}"
            )

    def build_flow(self, ctx: HarnessContext) -> AgentSessionFlow:
        """Build the runner for ``ctx`` and wrap it in an `AgentSessionFlow`.

        Raises:
            PluginError: ``build_runner`` raised or returned something that is not an
                `AgentFrameworkRunner`; the message names the plugin and the framework.
        """
        plugin = self.plugin_name or None
        try:
            runner = self.build_runner(ctx)
        except Exception as exc:
            raise PluginError(plugin, f"framework {self.name!r} failed to build its runner: {exc!r}") from exc
        if not _is_runner(runner):
            raise PluginError(
                plugin,
                f"framework {self.name!r}: build_runner returned {type(runner).__name__}, "
                "which does not implement AgentFrameworkRunner",
            )
        return AgentSessionFlow(runner, flow_type=ctx.flow_type, options=ctx.options)


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
            try:
                # One name at a time so a failure can name its entry point; pluggy still
                # records the distribution for list_plugin_distinfo.
                self._pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP, name=name)
            except pluggy.PluginValidationError as exc:
                raise PluginError(name, f"invalid hook implementation: {exc}") from exc
            except Exception as exc:
                raise PluginError(
                    name,
                    f"entry point {ep.value!r} of distribution {_dist_name(ep)!r} failed to load: {exc!r}",
                ) from exc
            self._sources[name] = "entry_point"
            self._frameworks = None

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
        # Keyed by id: plugin objects need not be hashable.
        distributions = {id(plugin): dist for plugin, dist in self._pm.list_plugin_distinfo()}
        infos: list[PluginInfo] = []
        for name, plugin in self._pm.list_name_plugin():
            if plugin is None:
                continue  # a blocked name
            source = self._sources.get(name, "inline")
            dist = distributions.get(id(plugin))
            if dist is not None:
                infos.append(
                    PluginInfo(
                        name=name, source=source, distribution=dist.project_name, version=str(dist.version)
                    )
                )
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
                    f"registered a {type(spec).__name__}, expected sessionflow.plugins.FrameworkSpec",
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


def _checked_text(tool_name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"tool {tool_name!r} returned {type(value).__name__}, expected str")
    return value


def _is_runner(value: object) -> bool:
    # Takes `object` so the runtime check survives the static type of the call site.
    return isinstance(value, AgentFrameworkRunner)


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in _FALSY


def _dist_name(ep: importlib.metadata.EntryPoint) -> str:
    dist = ep.dist
    return dist.name if dist is not None else "<unknown distribution>"


def _own_version() -> str | None:
    try:
        return importlib.metadata.version("sessionflow")
    except importlib.metadata.PackageNotFoundError:
        return None


def _describe_unknown_hooks(unknown: Sequence[str]) -> str:
    known = [name for name in vars(hookspecs) if name.startswith("sessionflow_")]
    parts: list[str] = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1)
        parts.append(f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name))
    listed = ", ".join(parts) or "(unknown)"
    return f"implements unknown hook {listed}; known hooks: {', '.join(sorted(known))}"
