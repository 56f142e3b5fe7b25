"""The rest of LangChain's built-in agent middleware, each as its docs configure it, against plain `create_agent`.

`test_middleware_builtin.py` has the first six; here: tool errors returned to the model
(`ToolErrorMiddleware`), the file search tools (`FilesystemFileSearchMiddleware`), emulated
tools (`LLMToolEmulator`: a model call inside the tool step), Auto Mode (a decision model
that blocks risky calls, in the tool step), the model router (a decision model that picks
the model once per run, in `before_agent`), provider tool search (deferred tools in the
request) and the persistent shell (`ShellToolMiddleware`).

The decision models are the user's own (`BaseDecisionModel`, as LangChain's docs implement
one): each logs every run as a ``"hook"``, so the harness compares how often and on what
they ran.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType] - partial stubs
from langchain.agents.middleware import (
    AgentMiddleware,
    AutoModeMiddleware,
    FilesystemFileSearchMiddleware,
    HostExecutionPolicy,
    LLMToolEmulator,
    ModelChoice,
    ModelRouterMiddleware,
    ProviderToolSearchMiddleware,
    ShellToolMiddleware,
    ToolCallRequest,
    ToolErrorMiddleware,
)
from langchain_core.decisions import BaseDecisionModel, ClassifierResponse, Question
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ConfigDict

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_langgraph.differential.docs_tools import book_hotel, divide, get_weather, search
from tests.adapter_langgraph.differential.harness import Built, Compiled, Scenario, assert_same_run, run_both

Middleware = Callable[[BaseChatModel, InvocationLog], list[AgentMiddleware[Any, Any, Any]]]


def agent(middleware: Middleware, *, tools: Callable[[InvocationLog], list[BaseTool]] | None = None) -> Any:
    def build(model: BaseChatModel, log: InvocationLog, checkpointer: InMemorySaver | None) -> Built:
        own = tools(log) if tools else [get_weather(log), search(log)]
        graph = cast(
            Compiled,
            create_agent(model, tools=own, middleware=middleware(model, log), checkpointer=checkpointer),
        )
        return Built(graph, own)

    return build


class LoggedDecisionModel(BaseDecisionModel):
    """A decision model of the user's own, answering from a table, logging each run as a hook."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str = "table-decider"
    log: InvocationLog
    answer: Callable[[Any], dict[str, Any]]

    @property
    def _provider(self) -> str:
        return "table"

    def _classify(self, state: Any, questions: dict[str, Question]) -> ClassifierResponse:
        self.log.record("hook", "classify", questions=sorted(questions), state=_described(state))
        return ClassifierResponse.model_validate({"model": self.model, "answers": self.answer(state)})


def _described(state: Any) -> Any:
    text: Any = getattr(state, "text", None)
    if text is not None:
        return str(text)
    if isinstance(state, Mapping):
        call = cast(Mapping[str, Any], state).get("tool_call")
        messages = cast(list[Any], cast(Mapping[str, Any], state).get("messages") or [])
        return {"tool_call": call, "messages": [str(getattr(m, "type", "?")) for m in messages]}
    return repr(state)


async def test_tool_error_middleware_returns_the_handled_error_to_the_model(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def on_error(error: Exception, request: ToolCallRequest) -> str | None:
        # The docs' handler: tell the model about input errors, let everything else propagate.
        if isinstance(error, ValueError):
            return f"Invalid input for {request.tool_call['name']}: {error}"
        return None

    scenario = Scenario(
        name="tool-error",
        build=agent(lambda model, log: [ToolErrorMiddleware(on_error)], tools=lambda log: [divide(log)]),
        script=[
            ModelReply.call(ScriptedToolCall("call_div", "divide", {"a": 1, "b": 0})),
            ModelReply.say("You cannot divide by zero."),
        ],
        turns=["divide 1 by 0"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "divide", "a": 1, "b": 0}]
    assert plain.requests[1]["messages"][-1]["content"] == "Invalid input for divide: division by zero"
    assert_same_run(plain, session)


async def test_filesystem_file_search_tools_run_in_their_tool_steps(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    root = tmp_path / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 'TODO: ship it'\n")
    (root / "README.md").write_text("# The app\n")
    scenario = Scenario(
        name="file-search",
        build=agent(
            lambda model, log: [FilesystemFileSearchMiddleware(root_path=str(root), use_ripgrep=False)]
        ),
        script=[
            ModelReply.call(ScriptedToolCall("call_glob", "glob_search", {"pattern": "**/*.py"})),
            ModelReply.call(ScriptedToolCall("call_grep", "grep_search", {"pattern": "TODO"})),
            ModelReply.say("One Python file, with a TODO."),
        ],
        turns=["find the python files and their TODOs"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[1]["messages"][-1]["content"] == "/src/app.py"
    assert plain.requests[2]["messages"][-1]["content"] == "/src/app.py"
    assert_same_run(plain, session)


async def test_llm_tool_emulator_answers_for_the_tool_with_a_model_call_in_the_tool_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-emulator",
        build=agent(lambda model, log: [LLMToolEmulator(tools=["get_weather"], model=model)]),
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("Emulated: foggy, 14C."),
            ModelReply.call(ScriptedToolCall("call_q", "search", {"query": "fog"})),
            ModelReply.say("Foggy in sf, as usual."),
        ],
        turns=["weather in sf, then search fog"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # get_weather never really ran: the emulator's model call answered for it.
    assert plain.tool_runs == [{"name": "search", "query": "fog"}]
    assert plain.requests[2]["messages"][-1]["content"] == "Emulated: foggy, 14C."
    assert_same_run(plain, session)


async def test_auto_mode_blocks_the_risky_call_and_its_classifier_sees_the_run_s_messages(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def risk(state: Any) -> dict[str, Any]:
        name = cast(Mapping[str, Any], state)["tool_call"]["name"]
        return {"is_risky": {"type": "noul", "noul": 0.9 if name == "book_hotel" else 0.1}}

    scenario = Scenario(
        name="auto-mode",
        build=agent(
            lambda model, log: [
                AutoModeMiddleware(
                    tools=["book_hotel", "get_weather"], classifier=LoggedDecisionModel(log=log, answer=risk)
                )
            ],
            tools=lambda log: [get_weather(log), book_hotel(log)],
        ),
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.call(ScriptedToolCall("call_book", "book_hotel", {"hotel_name": "Ritz"})),
            ModelReply.say("The booking was blocked."),
        ],
        turns=["check sf weather and book the Ritz"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == [{"name": "get_weather", "city": "sf"}]
    assert [h["state"]["messages"] for h in plain.hook_runs] == [
        ["human", "ai"],
        ["human", "ai", "tool", "ai"],
    ]
    assert "book_hotel" in plain.requests[2]["messages"][-1]["content"]
    # Documented (matrix row): in a tool step the classifier sees the messages this turn's
    # run produced, not the stored ones (the user's message, earlier turns). The same
    # classifications otherwise, as often, on the same calls.
    assert session.hook_runs == [_without_stored_messages(h) for h in plain.hook_runs]
    assert_same_run(plain, dataclasses.replace(session, hook_runs=plain.hook_runs))


def _without_stored_messages(hook_run: dict[str, Any]) -> dict[str, Any]:
    """A classification as a tool step makes it: the turn's stored (user) message left out."""
    state = dict(hook_run["state"])
    state["messages"] = [m for m in state["messages"] if m != "human"]
    return {**hook_run, "state": state}


async def test_model_router_picks_the_model_once_per_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def route(state: Any) -> dict[str, Any]:
        choice = "powerful" if "plan" in str(getattr(state, "text", "")) else "fast"
        other = "fast" if choice == "powerful" else "powerful"
        return {
            "model_route": {
                "type": "choice",
                "choice": choice,
                "probabilities": {choice: 0.8, other: 0.2},
                "confidence": 0.8,
            }
        }

    def router(model: BaseChatModel, log: InvocationLog) -> list[AgentMiddleware[Any, Any, Any]]:
        base = cast(ChatOpenAI, model)
        powerful = ChatOpenAI(
            model="gpt-powerful", base_url=base.openai_api_base, api_key=base.openai_api_key, max_retries=0
        )
        return [
            ModelRouterMiddleware(
                choices={
                    "fast": ModelChoice(model=model, criteria="Simple, well-scoped tasks."),
                    "powerful": ModelChoice(
                        model=powerful, criteria="Complex tasks requiring deeper reasoning."
                    ),
                },
                instructions="Choose the least costly model suited to the task.",
                classifier=LoggedDecisionModel(log=log, answer=route),
            )
        ]

    scenario = Scenario(
        name="model-router",
        build=agent(router),
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("Plan: pack a jacket."),
            ModelReply.say("Hello!"),
        ],
        turns=["plan a trip to sf", "hi"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert [r["model"] for r in plain.requests] == ["gpt-powerful", "gpt-powerful", "gpt-test"]
    assert [h["state"] for h in plain.hook_runs] == ["plan a trip to sf", "hi"]
    assert plain.state["model_route"]["choice"] == "fast"
    assert_same_run(plain, session)


async def test_provider_tool_search_defers_the_tool_in_every_request(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-search",
        build=agent(
            lambda model, log: [ProviderToolSearchMiddleware(searchable_tools=["book_hotel"])],
            tools=lambda log: [get_weather(log), book_hotel(log)],
        ),
        script=[
            ModelReply.call(ScriptedToolCall("call_sf", "get_weather", {"city": "sf"})),
            ModelReply.say("Sunny in sf."),
        ],
        turns=["weather in sf"],
        api="anthropic",
        plain_call="invoke",  # the docs' way; the session keeps answers as invoke returns them
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    tools = {t.get("name"): t for t in plain.requests[0]["tools"]}
    assert tools["book_hotel"].get("defer_loading") is True
    assert "tool_search_tool_bm25" in tools
    assert_same_run(plain, session)


async def test_shell_tool_is_refused_as_its_shell_lives_for_the_whole_run(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    def shell(model: BaseChatModel, log: InvocationLog) -> list[AgentMiddleware[Any, Any, Any]]:
        workspace = log.path.parent / f"shell-{log.path.stem}"
        return [
            ShellToolMiddleware(
                workspace_root=workspace,
                startup_commands=("export GREETING=hello",),
                execution_policy=HostExecutionPolicy(),
            )
        ]

    scenario = Scenario(
        name="shell",
        build=agent(shell),
        script=[
            ModelReply.call(ScriptedToolCall("call_set", "shell", {"command": "export GREETING=changed"})),
            ModelReply.call(ScriptedToolCall("call_echo", "shell", {"command": "echo $GREETING"})),
            ModelReply.say("The shell says changed."),
        ],
        turns=["set and echo a variable"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Plain: one shell for the run, so the second call sees the first call's export.
    assert "changed" in str(plain.requests[2]["messages"][-1]["content"])
    # The session refuses it when the flow is built (the matrix row): each tool step would
    # start a shell of its own, and the second call would print the startup value.
    assert session.requests == []
    assert len(session.errors) == 1
    assert session.errors[0].startswith("the flow was refused: UnsupportedOptionError(")
    assert (
        "option 'ShellToolMiddleware': ShellToolMiddleware keeps one live shell process" in session.errors[0]
    )
    assert "runs each command in a fresh process" in session.errors[0]
