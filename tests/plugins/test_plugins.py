"""The plugin manager with inline and module plugins. Nothing here loads installed entry points."""

from __future__ import annotations

import dataclasses
import pickle
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sessionflow import AgentSessionOptions, SessionError, ToolEffect, ToolPolicy
from sessionflow import plugins as plugins_module
from sessionflow.kit import (
    FrameworkSpec,
    HarnessContext,
    ToolInvocation,
    ToolSpec,
    effect_from_mcp_annotations,
    hookimpl,
)
from sessionflow.plugins import (
    DISABLE_AUTOLOAD_ENV,
    DISABLED_PLUGINS_ENV,
    LOAD_PLUGINS_ENV,
    PluginError,
    PluginInfo,
    SessionflowPlugins,
    UnknownFrameworkError,
    build_runner,
    get_plugins,
    reset_plugins,
)
from tests.plugins.helpers import CAPABILITIES, EchoRunner, FrameworksPlugin, make_spec

ALPHA = "tests.plugins.sample_plugin_alpha"
BETA = "tests.plugins.sample_plugin_beta"
BROKEN = "tests.plugins.sample_plugin_broken"
TYPO = "tests.plugins.sample_plugin_typo"


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No discovery settings from the outside, no autoload, no built-ins: only what a test adds."""
    monkeypatch.delenv(LOAD_PLUGINS_ENV, raising=False)
    monkeypatch.delenv(DISABLED_PLUGINS_ENV, raising=False)
    monkeypatch.setenv(DISABLE_AUTOLOAD_ENV, "1")
    monkeypatch.setattr(plugins_module, "DEFAULT_PLUGINS", ())


@pytest.fixture
def plugins() -> Iterator[SessionflowPlugins]:
    manager = SessionflowPlugins()
    manager.load(autoload=False)
    yield manager
    for name in manager.plugin_names():
        manager.unregister(name)


def harness_context(**changes: Any) -> HarnessContext:
    values: dict[str, Any] = {
        "flow_type": "test-flow",
        "model": "test-model",
        "system_prompt": None,
        "workspace": Path("/tmp/workspace"),
        "options": AgentSessionOptions(default_tool_effect=ToolEffect.READ),
        "tools": (),
        "settings": {},
    }
    values.update(changes)
    return HarnessContext(**values)


# --------------------------------------------------------------------------- registration


def test_registered_framework_carries_plugin_name_and_capabilities(plugins: SessionflowPlugins) -> None:
    plugins.register(
        FrameworksPlugin(make_spec("alpha"), make_spec("beta", model_api="responses")), name="two"
    )

    frameworks = plugins.frameworks()

    assert sorted(frameworks) == ["alpha", "beta"]
    assert frameworks["alpha"].plugin_name == "two"
    assert frameworks["alpha"].capabilities == CAPABILITIES
    assert frameworks["alpha"].capabilities.images is True
    assert frameworks["beta"].model_api == "responses"
    assert plugins.framework("beta") is frameworks["beta"]
    assert plugins.plugin_names() == ["two"]


def test_unregister_removes_the_plugins_frameworks(plugins: SessionflowPlugins) -> None:
    plugin = FrameworksPlugin(make_spec("alpha"))
    plugins.register(plugin, name="p")
    assert "alpha" in plugins.frameworks()

    assert plugins.unregister("p") is plugin

    assert plugins.frameworks() == {}
    assert plugins.unregister("p") is None


def test_frameworks_returns_a_copy(plugins: SessionflowPlugins) -> None:
    plugins.register(FrameworksPlugin(make_spec("alpha")), name="p")
    plugins.frameworks().clear()
    assert "alpha" in plugins.frameworks()


def test_build_runner_returns_the_plugins_runner(plugins: SessionflowPlugins) -> None:
    plugins.register(FrameworksPlugin(make_spec("alpha")), name="p")

    runner = build_runner(plugins.framework("alpha"), harness_context(flow_type="alpha-flow"))

    assert isinstance(runner, EchoRunner)
    assert runner.label == "alpha"


def test_context_settings_are_read_by_type() -> None:
    ctx = harness_context(
        settings={"base_url": "http://h/v1", "empty": "", "limit": 7, "env": {"A": 1}, "wrong": 3}
    )
    assert ctx.setting("base_url", str) == "http://h/v1"
    # A configuration file's empty string or wrong type counts as unset.
    assert ctx.setting("empty", str) is None
    assert ctx.setting("wrong", str) is None
    assert ctx.setting("missing", str) is None
    assert ctx.setting("limit", int) == 7
    assert ctx.mapping_setting("env") == {"A": 1}
    assert ctx.mapping_setting("limit") is None


def test_the_conformance_suite_builds_the_same_context_the_cli_does(
    plugins: SessionflowPlugins, tmp_path: Path
) -> None:
    from sessionflow.testing.conformance import bundled_cases_dir, load_cases
    from sessionflow.testing.conformance._driver import MODEL_NAME, build_case_flow

    seen: list[HarnessContext] = []

    def record(ctx: HarnessContext) -> EchoRunner:
        seen.append(ctx)
        return EchoRunner("alpha")

    plugins.register(FrameworksPlugin(make_spec("alpha", build_runner=record)), name="p")
    [case] = [c for c in load_cases(bundled_cases_dir()) if c.id == "explicit_policy_override"]
    flow = build_case_flow(
        case,
        plugins.framework("alpha"),
        flow_type="conf-alpha",
        model_base_url="http://m/v1",
        state_dir=tmp_path,
    )
    [ctx] = seen
    assert (ctx.flow_type, ctx.model, ctx.model_base_url, ctx.api_key) == (
        "conf-alpha",
        MODEL_NAME,
        "http://m/v1",
        "test",
    )
    assert (ctx.workspace, ctx.settings, ctx.api, ctx.framework_tools) == (tmp_path, {}, None, False)
    assert ctx.system_prompt == case.system_prompt
    assert [t.name for t in ctx.tools] == [t.name for t in case.tools]
    assert ctx.options is flow.options and flow.options.tool_policies == case.tool_policies
    assert case.tool_policies, "the case pins a policy, so the options are seen to carry it"
    assert isinstance(flow.runner, EchoRunner)


def test_build_runner_errors_name_the_plugin(plugins: SessionflowPlugins) -> None:
    def failing(ctx: HarnessContext) -> EchoRunner:
        raise RuntimeError("no API key")

    def not_a_runner(ctx: HarnessContext) -> object:
        return object()

    plugins.register(
        FrameworksPlugin(
            make_spec("failing", build_runner=failing), make_spec("wrong", build_runner=not_a_runner)
        ),
        name="adapter",
    )

    with pytest.raises(PluginError, match="no API key") as raised:
        build_runner(plugins.framework("failing"), harness_context())
    assert raised.value.plugin == "adapter"
    assert isinstance(raised.value.__cause__, RuntimeError)

    with pytest.raises(PluginError, match="does not implement AgentFrameworkRunner") as raised:
        build_runner(plugins.framework("wrong"), harness_context())
    assert raised.value.plugin == "adapter"
    assert "'adapter'" in str(raised.value)


def test_list_plugins_for_inline_plugins(plugins: SessionflowPlugins) -> None:
    plugins.register(FrameworksPlugin(make_spec("alpha")), name="inline-one")
    assert plugins.list_plugins() == [PluginInfo(name="inline-one", source="inline")]


def test_registering_the_same_name_twice(plugins: SessionflowPlugins) -> None:
    plugins.register(FrameworksPlugin(), name="p")
    with pytest.raises(PluginError, match="already registered") as raised:
        plugins.register(FrameworksPlugin(), name="p")
    assert raised.value.plugin == "p"


# --------------------------------------------------------------------------- errors naming plugins


def test_duplicate_framework_names_both_plugins(plugins: SessionflowPlugins) -> None:
    plugins.register(FrameworksPlugin(make_spec("alpha")), name="first-plugin")
    plugins.register(FrameworksPlugin(make_spec("alpha")), name="second-plugin")

    with pytest.raises(PluginError) as raised:
        plugins.frameworks()

    message = str(raised.value)
    assert "'alpha'" in message
    assert "first-plugin" in message
    assert "second-plugin" in message
    # The later registration is the one at fault.
    assert raised.value.plugin == "second-plugin"
    assert "already registered by plugin 'first-plugin'" in message


def test_hook_that_raises_names_the_plugin(plugins: SessionflowPlugins) -> None:
    class Exploding:
        @hookimpl
        def sessionflow_register_frameworks(self, register: Callable[[FrameworkSpec], None]) -> None:
            raise ValueError("adapter dependency missing")

    plugins.register(FrameworksPlugin(make_spec("alpha")), name="fine")
    plugins.register(Exploding(), name="exploding")

    with pytest.raises(PluginError, match="adapter dependency missing") as raised:
        plugins.frameworks()
    assert raised.value.plugin == "exploding"
    assert str(raised.value).startswith("plugin 'exploding':")
    assert isinstance(raised.value.__cause__, ValueError)
    assert isinstance(raised.value, SessionError)


def test_registering_something_else_names_the_plugin(plugins: SessionflowPlugins) -> None:
    class WrongType:
        @hookimpl
        def sessionflow_register_frameworks(self, register: Callable[[Any], None]) -> None:
            register({"name": "alpha"})

    plugins.register(WrongType(), name="wrong-type")

    with pytest.raises(PluginError, match="registered a dict, expected") as raised:
        plugins.frameworks()
    assert raised.value.plugin == "wrong-type"


def test_returning_specs_instead_of_registering(plugins: SessionflowPlugins) -> None:
    class Returning:
        @hookimpl
        def sessionflow_register_frameworks(self, register: Callable[[FrameworkSpec], None]) -> FrameworkSpec:
            return make_spec("alpha")

    plugins.register(Returning(), name="returning")

    with pytest.raises(PluginError, match=r"call register\(spec\)") as raised:
        plugins.frameworks()
    assert raised.value.plugin == "returning"


def test_async_hook_is_refused(plugins: SessionflowPlugins) -> None:
    class Async:
        @hookimpl
        async def sessionflow_register_frameworks(self, register: Callable[[FrameworkSpec], None]) -> None:
            register(make_spec("alpha"))

    plugins.register(Async(), name="async-plugin")

    with pytest.raises(PluginError, match="not async") as raised:
        plugins.frameworks()
    assert raised.value.plugin == "async-plugin"


def test_register_after_the_hook_returned_is_refused(plugins: SessionflowPlugins) -> None:
    kept: list[Callable[[FrameworkSpec], None]] = []

    class Keeper:
        @hookimpl
        def sessionflow_register_frameworks(self, register: Callable[[FrameworkSpec], None]) -> None:
            kept.append(register)

    plugins.register(Keeper(), name="keeper")
    assert plugins.frameworks() == {}

    with pytest.raises(PluginError, match="after the hook returned") as raised:
        kept[0](make_spec("late"))
    assert raised.value.plugin == "keeper"


def test_hook_without_the_register_parameter_is_allowed(plugins: SessionflowPlugins) -> None:
    class NoArgs:
        @hookimpl
        def sessionflow_register_frameworks(self) -> None:
            pass

    plugins.register(NoArgs(), name="no-args")
    assert plugins.frameworks() == {}


def test_hook_parameter_not_in_the_spec_names_the_plugin(plugins: SessionflowPlugins) -> None:
    class ExtraArg:
        @hookimpl
        def sessionflow_register_frameworks(
            self, register: Callable[[FrameworkSpec], None], config: Any
        ) -> None:
            pass

    with pytest.raises(PluginError, match="invalid hook implementation") as raised:
        plugins.register(ExtraArg(), name="extra-arg")
    assert raised.value.plugin == "extra-arg"
    assert plugins.plugin_names() == []


def test_misspelled_hook_is_caught_by_check_pending(plugins: SessionflowPlugins) -> None:
    class Misspelled:
        @hookimpl
        def sessionflow_register_framworks(self, register: Callable[[FrameworkSpec], None]) -> None:
            register(make_spec("alpha"))

    with pytest.raises(PluginError) as raised:
        plugins.register(Misspelled(), name="typo-plugin")

    assert raised.value.plugin == "typo-plugin"
    message = str(raised.value)
    assert "'sessionflow_register_framworks'" in message
    assert "did you mean 'sessionflow_register_frameworks'" in message
    # The offending plugin does not stay half-registered.
    assert plugins.plugin_names() == []


def test_unknown_framework_lists_the_available_ones(plugins: SessionflowPlugins) -> None:
    plugins.register(FrameworksPlugin(make_spec("beta"), make_spec("alpha")), name="p")

    with pytest.raises(UnknownFrameworkError) as raised:
        plugins.framework("gamma")

    error = raised.value
    assert isinstance(error, PluginError)
    assert isinstance(error, KeyError)
    assert str(error) == "unknown framework 'gamma'; available frameworks: alpha, beta"
    assert error.name == "gamma"
    assert error.available == ("alpha", "beta")
    assert error.plugin is None


def test_unknown_framework_with_nothing_registered(plugins: SessionflowPlugins) -> None:
    with pytest.raises(KeyError, match="available frameworks: none"):
        plugins.framework("alpha")


def test_plugin_errors_survive_pickling() -> None:
    error = PluginError("p", "broke")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.plugin, copy.reason, str(copy)) == ("p", "broke", "plugin 'p': broke")

    unknown = UnknownFrameworkError("x", ["a"])
    unknown_copy = pickle.loads(pickle.dumps(unknown))
    assert (unknown_copy.name, unknown_copy.available, str(unknown_copy)) == ("x", ("a",), str(unknown))


# --------------------------------------------------------------------------- loading


def test_load_is_idempotent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins_module, "DEFAULT_PLUGINS", (ALPHA,))
    manager = SessionflowPlugins()

    manager.load(autoload=False)
    manager.load(autoload=False)
    manager.load()

    assert manager.loaded
    assert manager.plugin_names() == [ALPHA]
    assert manager.frameworks()["alpha"].plugin_name == ALPHA
    [info] = manager.list_plugins()
    assert (info.name, info.source, info.distribution) == (ALPHA, "builtin", "sessionflow")


def test_broken_builtin_plugin_is_not_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins_module, "DEFAULT_PLUGINS", (BROKEN,))
    manager = SessionflowPlugins()

    with pytest.raises(PluginError, match="sample plugin cannot be imported") as raised:
        manager.load(autoload=False)
    assert raised.value.plugin == BROKEN
    assert not manager.loaded


def test_explicit_load_list_imports_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOAD_PLUGINS_ENV, f" {ALPHA} , {BETA},")
    manager = SessionflowPlugins()

    manager.load(autoload=False)

    assert manager.plugin_names() == [ALPHA, BETA]
    assert {name: spec.plugin_name for name, spec in manager.frameworks().items()} == {
        "alpha": ALPHA,
        "beta": BETA,
    }
    assert {info.source for info in manager.list_plugins()} == {"module"}


def test_explicit_load_list_with_an_unknown_name(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = "tests.plugins.no_such_plugin_module"
    monkeypatch.setenv(LOAD_PLUGINS_ENV, missing)
    manager = SessionflowPlugins()

    with pytest.raises(PluginError, match="entry points in group 'sessionflow'") as raised:
        manager.load(autoload=False)
    assert raised.value.plugin == missing


def test_disabled_plugins_are_not_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugins_module, "DEFAULT_PLUGINS", (BROKEN,))
    monkeypatch.setenv(LOAD_PLUGINS_ENV, f"{ALPHA},{BETA}")
    monkeypatch.setenv(DISABLED_PLUGINS_ENV, f"{ALPHA}, {BROKEN}, inline-name")
    manager = SessionflowPlugins()

    # The broken built-in is disabled, so it is not even imported.
    manager.load(autoload=False)

    assert manager.plugin_names() == [BETA]
    assert sorted(manager.frameworks()) == ["beta"]
    # The block also covers inline registrations under a disabled name.
    assert manager.register(FrameworksPlugin(make_spec("gamma")), name="inline-name") is None
    assert sorted(manager.frameworks()) == ["beta"]


def test_load_catches_a_misspelled_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOAD_PLUGINS_ENV, f"{ALPHA},{TYPO}")
    manager = SessionflowPlugins()

    with pytest.raises(PluginError, match="did you mean 'sessionflow_register_frameworks'") as raised:
        manager.load(autoload=False)

    assert raised.value.plugin == TYPO
    assert manager.plugin_names() == [ALPHA]


def write_dist_info(site: Path, distribution: str, entry_points: dict[str, str]) -> None:
    """A minimal installed distribution: enough for importlib.metadata to find its entry points."""
    dist_info = site / f"{distribution.replace('-', '_')}-0.1.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (dist_info / "entry_points.txt").write_text(f"[sessionflow]\n{lines}")


def test_entry_point_that_fails_to_import_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_dist_info(tmp_path, "broken-adapter", {"broken-ep": "no_such_module_for_sessionflow_tests"})
    # syspath_prepend is untyped in pytest; importlib.metadata reads sys.path at call time.
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "broken-ep")
    manager = SessionflowPlugins()

    with pytest.raises(PluginError, match="of distribution 'broken-adapter' failed to load") as raised:
        manager.load(autoload=False)
    assert raised.value.plugin == "broken-ep"
    assert isinstance(raised.value.__cause__, ModuleNotFoundError)


def test_entry_point_name_claimed_by_two_distributions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_dist_info(tmp_path, "adapter-one", {"clash": ALPHA})
    write_dist_info(tmp_path, "adapter-two", {"clash": BETA})
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "clash")
    manager = SessionflowPlugins()

    with pytest.raises(PluginError, match="declared by two distributions") as raised:
        manager.load(autoload=False)
    assert raised.value.plugin == "clash"
    assert "adapter-one" in str(raised.value)
    assert "adapter-two" in str(raised.value)


def test_entry_point_listed_by_name_is_loaded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    write_dist_info(tmp_path, "alpha-adapter", {"alpha-ep": ALPHA})
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.setenv(LOAD_PLUGINS_ENV, "alpha-ep")
    manager = SessionflowPlugins()

    manager.load(autoload=False)

    assert manager.frameworks()["alpha"].plugin_name == "alpha-ep"
    assert manager.list_plugins() == [
        PluginInfo(name="alpha-ep", source="entry_point", distribution="alpha-adapter", version="0.1")
    ]


def test_get_plugins_is_cached_until_reset() -> None:
    reset_plugins()
    try:
        first = get_plugins()
        assert first.loaded
        assert get_plugins() is first
        reset_plugins()
        assert get_plugins() is not first
    finally:
        reset_plugins()


# --------------------------------------------------------------------------- specs and tools


@pytest.mark.parametrize(
    ("annotations", "effect"),
    [
        # No hint is None, the answer every caller gives: the session's default decides.
        (None, None),
        ({}, None),
        ({"readOnlyHint": True}, ToolEffect.READ),
        ({"readOnlyHint": True, "idempotentHint": False, "destructiveHint": True}, ToolEffect.READ),
        ({"idempotentHint": True}, ToolEffect.IDEMPOTENT_WRITE),
        ({"readOnlyHint": False, "idempotentHint": True}, ToolEffect.IDEMPOTENT_WRITE),
        ({"destructiveHint": False}, None),
        ({"destructiveHint": True}, None),
        ({"readOnlyHint": False, "idempotentHint": False}, None),
        # Only a literal true counts: a malformed hint must not make a tool look safe.
        ({"readOnlyHint": "true"}, None),
        ({"title": "Search"}, None),
    ],
)
def test_effect_from_mcp_annotations(annotations: dict[str, Any] | None, effect: ToolEffect | None) -> None:
    assert effect_from_mcp_annotations(annotations) is effect


def _echo(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
    return f"{arguments['text']} [{invocation.idempotency_key}#{invocation.attempt}]"


async def _async_echo(arguments: dict[str, Any], invocation: ToolInvocation) -> str:
    return _echo(arguments, invocation)


SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


def tool(**changes: Any) -> ToolSpec:
    values: dict[str, Any] = {
        "name": "echo",
        "description": "Echo the text.",
        "parameters": SCHEMA,
        "effect": None,
        "policy": None,
        "handler": _echo,
    }
    values.update(changes)
    return ToolSpec(**values)


def test_tool_framework_effect() -> None:
    assert tool().framework_effect is None
    assert tool(effect=ToolEffect.IDEMPOTENT_WRITE).framework_effect is ToolEffect.IDEMPOTENT_WRITE
    assert tool(mcp_annotations={"readOnlyHint": True}).framework_effect is ToolEffect.READ
    # Neither hint: the session's default effect decides.
    assert tool(mcp_annotations={}).framework_effect is None
    assert tool(mcp_annotations={"destructiveHint": False}).framework_effect is None
    explicit = tool(effect=ToolEffect.NON_IDEMPOTENT_WRITE, mcp_annotations={"readOnlyHint": True})
    assert explicit.framework_effect is ToolEffect.NON_IDEMPOTENT_WRITE
    assert tool(policy=ToolPolicy(effect=ToolEffect.READ)).policy == ToolPolicy(effect=ToolEffect.READ)


@pytest.mark.parametrize("handler", [_echo, _async_echo])
async def test_tool_call_runs_sync_and_async_handlers(handler: Any) -> None:
    invocation = ToolInvocation(tool_call_id="c1", idempotency_key="s/t/c1", attempt=2)
    assert await tool(handler=handler).call({"text": "hi"}, invocation) == "hi [s/t/c1#2]"


async def test_tool_call_checks_the_result_type() -> None:
    def returns_number(arguments: dict[str, Any], invocation: ToolInvocation) -> Any:
        return 42

    invocation = ToolInvocation(tool_call_id="c1", idempotency_key="k", attempt=1)
    with pytest.raises(TypeError, match="'echo' returned int"):
        await tool(handler=returns_number).call({}, invocation)


def test_tool_parameters_must_be_an_object_schema() -> None:
    with pytest.raises(ValueError, match="type 'object'"):
        tool(parameters={"type": "string"})
    with pytest.raises(ValueError, match="must not be empty"):
        tool(name=" ")


@pytest.mark.parametrize("name", ["", "Alpha", "1alpha", "al pha", "alpha.beta", "_alpha"])
def test_framework_names_are_validated(name: str) -> None:
    with pytest.raises(ValueError, match="framework name"):
        make_spec(name)


@pytest.mark.parametrize("name", ["a", "openai-agents", "pydantic_ai", "x2"])
def test_valid_framework_names(name: str) -> None:
    assert make_spec(name).name == name


def test_framework_resume_texts_must_not_be_blank() -> None:
    spec = make_spec("alpha")
    with pytest.raises(ValueError, match="resume_texts must not contain blank text"):
        dataclasses.replace(spec, resume_texts=("Go on.", " "))
    assert dataclasses.replace(spec, resume_texts=("Go on.",)).resume_texts == ("Go on.",)


@pytest.mark.parametrize("description", ["", "  ", "two\nlines", "carriage\rreturn"])
def test_framework_descriptions_are_one_nonempty_line(description: str) -> None:
    with pytest.raises(ValueError, match="description"):
        make_spec("alpha", description=description)


def test_framework_model_api_is_validated() -> None:
    bad: Any = "grpc"
    with pytest.raises(ValueError, match="model_api"):
        make_spec("alpha", model_api=bad)


def test_harness_context_repr_hides_the_api_key() -> None:
    ctx = harness_context(api_key="sk-secret-value", model_base_url="http://proxy")
    assert ctx.api_key == "sk-secret-value"
    assert "sk-secret-value" not in repr(ctx)
    assert "http://proxy" in repr(ctx)
