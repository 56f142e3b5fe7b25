"""The same scripted tool turn through sessionflow, the frameworks' own Temporal durability,
and the plain frameworks (issue 13, item 1).

    uv run python -m bench.peers [--turns N] [--burst N] [--burst-rounds N] [--only NAME,...]
                                 [--claude-turns N] [--claude-burst N]

One embedded dev server and one in-process `ScriptedModelServer` (zero latency). Every
variant is a long-lived child process with its own worker, driven turn by turn over a line
protocol, the variants interleaved in a rotating order. A turn: model call -> two parallel
read tools (`read_a`, `read_b`) -> model call -> final answer. Durable variants start one
workflow (session) per turn; latency is start -> answer seen: `execute_workflow` for the
peers, and for sessionflow `start_session(id, prompt)` -> the workflow task that processes the
second RunModel result (history long-poll, no query). History: `describe()` of that workflow.

The Claude Agent SDK variants (`bench/_peer_claude.py`; `--only claude` runs them alone) have a
turn of their own shape (one custom tool call; each CLI start costs about a second), run in their
own rounds after the others (`--claude-turns`, `--claude-warmup`), and also report the CPU time
of the Claude Code CLI processes each turn started. Their throughput rounds are small
(`--claude-burst`, 5 turns at once per variant by default, `--burst-rounds` rounds): every turn
starts CLI processes of ~0.75 s of CPU each, so 50 at once would only measure the machine.

The run ends with one table of issue 25's goals, a row per framework: sessionflow's p50,
throughput and history bytes per tool turn against that framework's durable peer. Claude has no
durable peer; its row compares with plain `query()`, which is a bound on any durable peer built
on it (the same CLI run plus steps of its own): p50 and CLI CPU per turn, turns/s in the small
burst, and sessionflow's own history bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._common import percentile
from bench._peer_loop import rss_kib
from sessionflow.demo import ModelReply, RecordedRequest, ScriptedModelServer, ScriptedToolCall

ROOT = Path(__file__).resolve().parent.parent
PEER_OPENAI = ("temporalio-openai-agents==1.1.0", "temporalio==1.35.0")
PEER_LANGGRAPH = "temporalio-langgraph==0.1.0"
PEER_ADK = "temporalio-google-adk==0.0.1"
# The ADK peer's env gets the workspace's own versions of these (as LANGGRAPH_SHARED below).
ADK_SHARED = ("temporalio", "google-adk", "google-genai")
ADK_MODEL = "gemini-2.5-flash"
PEER_STRANDS = ("temporalio-strands-agents==0.1.0", "temporalio==1.35.0")
# Strands runs in its own resolution fork (`ci/strands.sh` says why): the sessionflow and
# plain Strands variants run in that environment, and the peer's isolated env gets its
# strands-agents version.
STRANDS_VENV = ROOT / ".sessionflow-test" / "strands-venv"
# The LangGraph peer's env gets the workspace's own versions of these, so every LangGraph
# variant runs the same LangGraph and LangChain code and only the durability differs.
LANGGRAPH_SHARED = (
    "temporalio",
    "langgraph",
    "langgraph-checkpoint",
    "langgraph-prebuilt",
    "langchain-core",
    "langchain-openai",
    "openai",
)


# -- children that run in the workspace env ----------------------------------------------------


async def tail_turn_done(client: Any, workflow_id: str, model_steps: int = 2) -> None:
    """Long-poll the history until the WFT after the `model_steps`-th RunModel result completed."""
    from temporalio.api.common.v1 import WorkflowExecution
    from temporalio.api.enums.v1 import EventType
    from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryRequest
    from temporalio.service import RPCError, RPCStatusCode

    token = b""
    names: dict[int, str] = {}
    done_models = 0
    while True:
        try:
            response = await client.workflow_service.get_workflow_execution_history(
                GetWorkflowExecutionHistoryRequest(
                    namespace=client.namespace,
                    execution=WorkflowExecution(workflow_id=workflow_id),
                    next_page_token=token,
                    wait_new_event=True,
                )
            )
        except RPCError as error:
            # A long poll the server ends without a new event (seen as CANCELLED when 50 turns
            # at once wait longer than its long-poll limit): poll again from the same token.
            if error.status not in (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED):
                raise
            continue
        token = response.next_page_token
        for event in response.history.events:
            kind = event.event_type
            if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                names[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
            elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
                if names.get(event.activity_task_completed_event_attributes.scheduled_event_id, "").endswith(
                    "RunModel"
                ):
                    done_models += 1
            elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED and done_models >= model_steps:
                return


def _local_reads(kind: str) -> tuple[str, Any]:
    """(kind without "-local", flow options whose reads run as local steps, or None)."""
    if not kind.endswith("-local"):
        return kind, None
    from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy

    local = ToolPolicy(effect=ToolEffect.READ, local_timeout=10)
    return kind.removesuffix("-local"), AgentSessionOptions(tool_policies={"read_a": local, "read_b": local})


async def _child(kind: str, address: str) -> None:
    model_url = os.environ["BENCH_MODEL_URL"]
    flow_type = f"bench-peer-{kind}"
    kind, local_options = _local_reads(kind)
    versions: dict[str, str] = {}
    run_turn: Any
    burst: Any
    if kind in ("plain-openai", "sf-openai", "sf-openai-whole"):
        from agents import Agent, OpenAIResponsesModel, Runner, function_tool
        from openai import AsyncOpenAI

        def openai_agent() -> Agent[Any]:
            @function_tool
            async def read_a(key: str) -> str:
                """Read record A."""
                return f"a:{key}"

            @function_tool
            async def read_b(key: str) -> str:
                """Read record B."""
                return f"b:{key}"

            model = OpenAIResponsesModel(
                model="bench-model", openai_client=AsyncOpenAI(base_url=model_url, api_key="x")
            )
            return Agent(name="bench", instructions="You read records.", model=model, tools=[read_a, read_b])

        versions = {n: importlib.metadata.version(n) for n in ("openai-agents", "openai", "temporalio")}
        if kind == "plain-openai":
            agent = openai_agent()

            async def plain_openai() -> dict[str, Any]:
                start = time.perf_counter_ns()
                result = await Runner.run(agent, "read a and b")
                return {"ms": (time.perf_counter_ns() - start) / 1e6, "answer": str(result.final_output)}

            run_turn = plain_openai
            burst = _gather_burst(plain_openai)
        else:
            from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy
            from sessionflow_openai_agents import openai_agents_session_flow

            read = ToolPolicy(effect=ToolEffect.READ)
            # One agent for the process, as the peers share one model client: a factory is
            # called on every step, and a new AsyncOpenAI client costs ~20 ms (its TLS context).
            # "whole": model calls in one piece, as the plugin's model activity makes them
            # (no live deltas); the default streams every call.
            flow = openai_agents_session_flow(
                openai_agent(),
                flow_type=flow_type,
                options=local_options or AgentSessionOptions(tool_policies={"read_a": read, "read_b": read}),
                stream_model_calls=kind != "sf-openai-whole",
            )
            run_turn, burst = await _sessionflow_turns(flow, address)
    elif kind in ("plain-pydantic", "sf-pydantic"):
        from pydantic_ai import Agent as PAgent
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        def pydantic_agent() -> PAgent[None, str]:
            model = OpenAIChatModel("bench-model", provider=OpenAIProvider(base_url=model_url, api_key="x"))
            agent = PAgent(model, name="bench", instructions="You read records.")

            @agent.tool_plain(metadata={"sessionflow_effect": "read"})
            async def read_a(key: str) -> str:
                """Read record A."""
                return f"a:{key}"

            @agent.tool_plain(metadata={"sessionflow_effect": "read"})
            async def read_b(key: str) -> str:
                """Read record B."""
                return f"b:{key}"

            return agent

        versions = {n: importlib.metadata.version(n) for n in ("pydantic-ai-slim", "openai", "temporalio")}
        if kind == "plain-pydantic":
            pagent = pydantic_agent()

            async def plain_pydantic() -> dict[str, Any]:
                start = time.perf_counter_ns()
                result = await pagent.run("read a and b")
                return {"ms": (time.perf_counter_ns() - start) / 1e6, "answer": result.output}

            run_turn = plain_pydantic
            burst = _gather_burst(plain_pydantic)
        else:
            from sessionflow_pydantic_ai import pydantic_ai_session_flow

            if local_options is not None:
                flow = pydantic_ai_session_flow(pydantic_agent(), flow_type=flow_type, options=local_options)
            else:
                flow = pydantic_ai_session_flow(pydantic_agent(), flow_type=flow_type)
            run_turn, burst = await _sessionflow_turns(flow, address)
    elif kind in ("plain-langgraph", "sf-langgraph"):
        from langchain_core.tools import tool
        from langgraph.checkpoint.memory import InMemorySaver

        @tool
        async def read_a(key: str) -> str:
            """Read record A."""
            return f"a:{key}"

        @tool
        async def read_b(key: str) -> str:
            """Read record B."""
            return f"b:{key}"

        builder = langgraph_agent(model_url, [read_a, read_b])
        versions = {
            n: importlib.metadata.version(n)
            for n in ("langgraph", "langchain-core", "langchain-openai", "temporalio")
        }
        if kind == "plain-langgraph":
            compiled = builder.compile(checkpointer=InMemorySaver())

            async def plain_langgraph() -> dict[str, Any]:
                start = time.perf_counter_ns()
                config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
                result = await compiled.ainvoke({"messages": [("user", "read a and b")]}, config)
                ms = (time.perf_counter_ns() - start) / 1e6
                return {"ms": ms, "answer": str(result["messages"][-1].content)}

            run_turn = plain_langgraph
            burst = _gather_burst(plain_langgraph)
        else:
            from sessionflow_langgraph import EFFECT_METADATA_KEY, langgraph_session_flow

            for read in (read_a, read_b):
                read.metadata = {EFFECT_METADATA_KEY: "read"}
            if local_options is not None:
                flow = langgraph_session_flow(
                    graph=builder, tool_node="tools", flow_type=flow_type, options=local_options
                )
            else:
                flow = langgraph_session_flow(graph=builder, tool_node="tools", flow_type=flow_type)
            run_turn, burst = await _sessionflow_turns(flow, address)
    elif kind in ("plain-adk", "sf-adk"):
        from google.adk.agents import LlmAgent
        from google.adk.models.google_llm import Gemini

        def adk_agent() -> LlmAgent:
            async def read_a(key: str) -> str:
                """Read record A."""
                return f"a:{key}"

            async def read_b(key: str) -> str:
                """Read record B."""
                return f"b:{key}"

            return LlmAgent(
                name="bench",
                model=Gemini(model=ADK_MODEL, base_url=os.environ["BENCH_GEMINI_URL"]),
                instruction="You read records.",
                tools=[read_a, read_b],
            )

        versions = {n: importlib.metadata.version(n) for n in ("google-adk", "google-genai", "temporalio")}
        if kind == "plain-adk":
            from google.adk.runners import InMemoryRunner
            from google.genai import types

            runner = InMemoryRunner(agent=adk_agent(), app_name="bench")

            async def plain_adk() -> dict[str, Any]:
                start = time.perf_counter_ns()
                session = await runner.session_service.create_session(app_name="bench", user_id="u")
                answer = ""
                message = types.Content(role="user", parts=[types.Part(text="read a and b")])
                async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                    if event.is_final_response() and event.content and event.content.parts:
                        answer = "".join(part.text or "" for part in event.content.parts)
                return {"ms": (time.perf_counter_ns() - start) / 1e6, "answer": answer}

            run_turn = plain_adk
            burst = _gather_burst(plain_adk)
        else:
            from sessionflow import AgentSessionOptions, ToolEffect, ToolPolicy
            from sessionflow_google_adk import google_adk_session_flow

            read = ToolPolicy(effect=ToolEffect.READ)
            flow = google_adk_session_flow(
                adk_agent(),
                flow_type=flow_type,
                options=local_options or AgentSessionOptions(tool_policies={"read_a": read, "read_b": read}),
            )
            run_turn, burst = await _sessionflow_turns(flow, address)
    elif kind in ("plain-strands", "sf-strands"):
        from bench._strands_variants import strands_variant

        versions, run_turn, burst = await strands_variant(kind, model_url, flow_type, local_options, address)
    else:
        raise SystemExit(f"unknown child {kind}")
    print(json.dumps({"ready": True, "versions": versions}), flush=True)
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line or line.strip() == "quit":
            return
        if line.startswith("burst "):
            print(json.dumps(await burst(int(line.split()[1]))), flush=True)
        else:
            print(json.dumps(await run_turn()), flush=True)


def langgraph_agent(model_url: str, tools: list[Any]) -> Any:
    """The graph of LangGraph's docs that every LangGraph variant runs: `agent` (one model call,
    tools bound) <-> `tools` (a `ToolNode`), routed by `tools_condition`. The plugin's copy
    (`bench/_peer_langgraph.py`) differs only where the plugin needs it to."""
    from langchain_core.messages import AnyMessage
    from langchain_openai import ChatOpenAI
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from pydantic import SecretStr

    chat = ChatOpenAI(model="bench-model", base_url=model_url, api_key=SecretStr("x"))
    # bind_tools and add_node mention generic types without their arguments in the stubs.
    model = chat.bind_tools(tools)  # pyright: ignore[reportUnknownMemberType]

    async def agent(state: MessagesState) -> dict[str, list[AnyMessage]]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)  # pyright: ignore[reportUnknownMemberType]
    builder.add_node("tools", ToolNode(tools))  # pyright: ignore[reportUnknownMemberType]
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    builder.add_edge("tools", "agent")
    return builder


def _gather_burst(run_turn: Any) -> Any:
    """`count` turns at once in this process; answers checked after the clock stops."""

    async def burst(count: int) -> dict[str, Any]:
        start = time.perf_counter()
        results = await asyncio.gather(*(run_turn() for _ in range(count)))
        seconds = time.perf_counter() - start
        ok = sum("a:1" in str(r.get("answer")) for r in results)
        return {"seconds": seconds, "turns": count, "ok": ok, "rss_kib": rss_kib()}

    return burst


_background: list[asyncio.Task[None]] = []


async def _sessionflow_turns(flow: Any, address: str) -> Any:
    from sessionflow import AgentSessionClient, connect, serve_agent_flows

    client = await connect(address)
    _background.append(asyncio.create_task(serve_agent_flows(client, [flow])))
    sessions = AgentSessionClient(client, flow)

    async def turn() -> dict[str, Any]:
        session_id = f"peer-sf-{uuid.uuid4().hex[:12]}"
        start = time.perf_counter_ns()
        await sessions.start_session(session_id, "read a and b")
        await tail_turn_done(client, session_id)
        ms = (time.perf_counter_ns() - start) / 1e6
        info = (
            await client.get_workflow_handle(session_id).describe()
        ).raw_description.workflow_execution_info
        snapshot = await sessions.get_agent_snapshot(session_id)
        answer = snapshot.messages[-1].message.text if snapshot.messages else None
        await sessions.stop_session(session_id)
        return {"ms": ms, "events": info.history_length, "bytes": info.history_size_bytes, "answer": answer}

    async def burst(count: int) -> dict[str, Any]:
        ids = [f"peer-sf-burst-{uuid.uuid4().hex[:12]}" for _ in range(count)]

        async def one(session_id: str) -> None:
            await sessions.start_session(session_id, "read a and b")
            await tail_turn_done(client, session_id)

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in ids))
        seconds = time.perf_counter() - start
        rss = rss_kib()
        ok = 0
        for session_id in ids:
            snapshot = await sessions.get_agent_snapshot(session_id)
            ok += bool(snapshot.messages) and "a:1" in str(snapshot.messages[-1].message.text)
            await sessions.stop_session(session_id)
        return {"seconds": seconds, "turns": count, "ok": ok, "rss_kib": rss}

    return turn, burst


def child_main() -> None:
    asyncio.run(_child(sys.argv[1], sys.argv[2]))


# -- the parent --------------------------------------------------------------------------------


@dataclass
class Variant:
    name: str
    argv: list[str]
    env_note: str
    proc: subprocess.Popen[str] | None = None
    env: dict[str, str] = field(default_factory=lambda: {})
    """Added to the child's environment (which of a module's peers it serves, say)."""
    versions: dict[str, str] = field(default_factory=lambda: {})
    ms: list[float] = field(default_factory=lambda: [])
    events: list[int] = field(default_factory=lambda: [])
    size: list[int] = field(default_factory=lambda: [])
    bursts: list[float] = field(default_factory=lambda: [])
    burst_cli_cpu: list[float] = field(default_factory=lambda: [])
    """The Claude variants' CLI CPU seconds per turn in each throughput round."""
    burst_self_cpu: list[float] = field(default_factory=lambda: [])
    """The Claude variants' own process CPU seconds per turn in each throughput round."""
    burst_steps: list[list[list[Any]]] = field(default_factory=lambda: [])
    """The Claude session's steps in its throughput rounds: per turn, [name, wait ms, run ms] each."""
    rss_kib: int = 0
    results: list[dict[str, Any]] = field(default_factory=lambda: [])
    """The Claude variants' measured turns, as their child reported them."""

    def start(self, env: dict[str, str]) -> None:
        # A session of its own, so that stop() can end the whole group: an isolated peer runs
        # under `uv run`, and killing uv alone would leave its Python child running.
        self.proc = subprocess.Popen(
            self.argv,
            cwd=ROOT,
            env={**env, **self.env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        ready = self.read()
        self.versions = ready["versions"]

    def read(self) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name} exited (rc={self.proc.poll()})")
            if line.startswith("{"):
                data: dict[str, Any] = json.loads(line)
                return data

    def turn(self) -> dict[str, Any]:
        return self.ask("turn")

    def ask(self, line: str) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.read()

    def stop(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the group this variant started, only
                self.proc.wait()


def _script(model: ScriptedModelServer, key: str) -> None:
    model.script(
        key,
        [
            ModelReply.call(
                ScriptedToolCall("call_a", "read_a", {"key": "1"}),
                ScriptedToolCall("call_b", "read_b", {"key": "2"}),
            ),
            ModelReply.say("a:1 and b:2"),
        ],
    )


def _check_langgraph_turn(name: str, requests: list[RecordedRequest]) -> None:
    """The LangGraph variants run one graph three ways, so the model must see the same turn:
    both tools offered on both calls, and both results back, by call ID, in the second."""
    tools = [sorted(r.tool_names()) for r in requests]
    results = requests[1].tool_results()
    if tools != [["read_a", "read_b"]] * 2 or results != {"call_a": "a:1", "call_b": "b:2"}:
        raise RuntimeError(f"{name}: the model saw tools {tools} and tool results {results}")


def _respond_by_conversation(request: RecordedRequest) -> ModelReply:
    """The turn's two replies, chosen by what each request already holds, so that many
    concurrent turns can share one key: no tool results yet -> call both tools; else answer."""
    if request.tool_results():
        return ModelReply.say("a:1 and b:2")
    return ModelReply.call(
        ScriptedToolCall(f"call_a_{request.index}", "read_a", {"key": "1"}),
        ScriptedToolCall(f"call_b_{request.index}", "read_b", {"key": "2"}),
    )


def _with_workspace_versions(peer: str, shared: Sequence[str]) -> list[str]:
    """The peer package, and the workspace's own versions of `shared`, pinned."""
    return [peer, *(f"{name}=={importlib.metadata.version(name)}" for name in shared)]


def _isolated(script: str, packages: Sequence[str]) -> list[str]:
    """A peer script run in a `uv run --isolated` env of `packages` (never the workspace lock)."""
    return [
        "uv",
        "run",
        "--isolated",
        "--no-project",
        *[a for p in packages for a in ("--with", p)],
        "python",
        script,
    ]


def _strands_ws(kind: str) -> list[str]:
    return [
        str(STRANDS_VENV / "bin" / "python"),
        "-c",
        "from bench.peers import child_main; child_main()",
        kind,
    ]


def _prepare_strands(variants: list[Variant]) -> None:
    """Sync the Strands environment (as `ci/strands.sh` does) and give the peer's isolated env
    the same strands-agents version, if any Strands variant runs."""
    if not any("strands" in v.name for v in variants):
        return
    env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(STRANDS_VENV)}
    subprocess.run(
        ["uv", "sync", "--locked", "--quiet", "--group", "strands", "--no-group", "mcp-servers"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    version = subprocess.run(
        [
            str(STRANDS_VENV / "bin" / "python"),
            "-c",
            "import importlib.metadata as m; print(m.version('strands-agents'))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    for variant in variants:
        if variant.name == "temporalio-strands-agents plugin":
            variant.argv = _isolated(
                "bench/_peer_strands.py", (*PEER_STRANDS, f"strands-agents[openai]=={version}")
            )


def _ws(kind: str) -> list[str]:
    return [sys.executable, "-c", "from bench.peers import child_main; child_main()", kind]


def _pydantic_peer(peer: str, name: str) -> Variant:
    """One of `bench/_peer_pydantic.py`'s peers; `peer` picks which agent and workflow it serves.

    Its `PEER_ENV` is spelled out here: importing that module would build its agent in this process.
    """
    return Variant(
        name,
        [sys.executable, "-c", "import bench._peer_pydantic as p; p.run()"],
        "workspace env",
        env={"BENCH_PYDANTIC_PEER": peer},
    )


def _claude_peer(kind: str, name: str) -> Variant:
    """One of `bench/_peer_claude.py`'s variants (`kind`: `session`, `plain-query`, `plain-client`)."""
    return Variant(
        name, [sys.executable, "-c", "import bench._peer_claude as p; p.run()", kind], "workspace env"
    )


CLAUDE_SESSION = "sessionflow+claude-agent-sdk"
CLAUDE_PLAINS = ("plain claude-agent-sdk query()", "plain claude-agent-sdk ClaudeSDKClient")


def _claude_rounds(
    model: ScriptedModelServer, variants: list[Variant], keys: dict[str, str], turns: int, warmup: int
) -> None:
    """`warmup + turns` Claude tool turns per variant, interleaved; each checked: the answer holds
    the tool's output, and the turn made exactly two model requests."""
    from bench import _peer_claude

    for variant in variants:
        model.reset(keys[variant.name])
        model.respond(keys[variant.name], _peer_claude.respond)
    for rnd in range(warmup + turns):
        shift = rnd % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            key = keys[variant.name]
            before = len(model.requests(key))
            result = variant.turn()
            requests = len(model.requests(key)) - before
            if _peer_claude.TOOL_OUTPUT not in str(result.get("answer")) or requests != 2:
                raise RuntimeError(f"{variant.name}: {requests} model requests (expected 2), turn {result}")
            if rnd >= warmup:
                variant.results.append(result)
                variant.ms.append(float(result["ms"]))
            print(f"  claude round {rnd + 1}: {variant.name}: {result['ms']:.0f} ms", flush=True)


def _claude_bursts(
    model: ScriptedModelServer, variants: list[Variant], keys: dict[str, str], count: int, rounds: int
) -> None:
    """`rounds` rounds of `count` Claude tool turns at once per variant, in a rotating order; each
    checked: every answer holds the tool's output, and the round made exactly 2 model requests
    per turn. The model responder of `_claude_rounds` stays in place (it answers by content)."""
    for rnd in range(rounds):
        shift = rnd % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            key = keys[variant.name]
            before = len(model.requests(key))
            result = variant.ask(f"burst {count}")
            requests = len(model.requests(key)) - before
            if result["ok"] != count or requests != 2 * count:
                raise RuntimeError(
                    f"{variant.name}: {result['ok']}/{count} answers right, "
                    f"{requests} model requests (expected {2 * count})"
                )
            variant.bursts.append(float(result["turns"]) / float(result["seconds"]))
            variant.burst_cli_cpu.append((result["cli_user_s"] + result["cli_sys_s"]) / count)
            variant.burst_self_cpu.append(result["self_cpu_s"] / count)
            variant.burst_steps += result.get("steps", [])
            variant.rss_kib = max(variant.rss_kib, int(result["rss_kib"]))
            print(
                f"  claude burst round {rnd + 1}: {variant.name}: {variant.bursts[-1]:.2f} turns/s, "
                f"CLI CPU {variant.burst_cli_cpu[-1]:.2f} s/turn",
                flush=True,
            )


def _print_claude(variants: list[Variant], turns: int, burst: int, rounds: int) -> None:
    variants = [v for v in variants if v.results]
    if not variants:
        return
    by_name = {v.name: v for v in variants}

    def cli_cpu(variant: Variant) -> list[float]:
        return [r["cli_user_s"] + r["cli_sys_s"] for r in variant.results]

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    def ratios(variant: Variant, measure: Callable[[Variant], float]) -> str:
        if variant.name != CLAUDE_SESSION:
            return "-"
        cells = [
            f"{measure(variant) / measure(by_name[p]):.2f}x vs {p.rsplit(' ', 1)[1]}"
            for p in CLAUDE_PLAINS
            if p in by_name and measure(by_name[p])
        ]
        return "; ".join(cells) or "-"

    print(
        f"\nClaude Agent SDK: turn = user message -> model calls read_record (in-process SDK MCP tool) "
        f"-> model answers; {turns} turns per variant, interleaved. CLI CPU = user+sys of every "
        "process the turn started (the CLI and its children), from getrusage(RUSAGE_CHILDREN) "
        "plus /proc/<pid>/stat of live descendants\n"
    )
    print(
        "| variant | p50 ms | p95 ms | CLI CPU s/turn p50 (p95) | CLI user / sys s, mean "
        "| processes seen/turn (50 ms poll) | own process CPU s/turn p50 | events/turn | history bytes/turn "
        "| p50 ms vs plain | CLI CPU vs plain |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for v in variants:
        cpu = cli_cpu(v)
        procs: dict[str, int] = {}
        for result in v.results:
            for comm, count in result["processes"].items():
                procs[comm] = procs.get(comm, 0) + count
        seen = ", ".join(f"{comm} {count / len(v.results):.1f}" for comm, count in sorted(procs.items()))
        events = [int(r["events"]) for r in v.results if "events" in r]
        size = [int(r["bytes"]) for r in v.results if "bytes" in r]
        print(
            f"| {v.name} | {percentile(v.ms, 50):.0f} | {percentile(v.ms, 95):.0f} "
            f"| {percentile(cpu, 50):.2f} ({percentile(cpu, 95):.2f}) "
            f"| {mean([r['cli_user_s'] for r in v.results]):.2f} / {mean([r['cli_sys_s'] for r in v.results]):.2f} "
            f"| {seen or '-'} | {percentile([r['self_cpu_s'] for r in v.results], 50):.2f} "
            f"| {f'{percentile(events, 50):.0f}' if events else '-'} "
            f"| {f'{percentile(size, 50):.0f}' if size else '-'} "
            f"| {ratios(v, lambda x: percentile(x.ms, 50))} "
            f"| {ratios(v, lambda x: percentile(cli_cpu(x), 50))} |"
        )
    for v in variants:
        steps = [r["steps"] for r in v.results if "steps" in r]
        if steps and all(len(s) == len(steps[0]) for s in steps):
            runs = [
                f"{name} {percentile([s[i][1] for s in steps], 50):.0f}"
                for i, (name, _) in enumerate(steps[0])
            ]
            rest = percentile([r["ms"] - sum(ms for _, ms in r["steps"]) for r in v.results], 50)
            print(
                f"  {v.name}: step runs (activity started -> completed) p50 ms: {', '.join(runs)}; "
                f"the rest of the turn (start, dispatch, workflow tasks) {rest:.0f}"
            )
        if "answer_ms" in (v.results[0] if v.results else {}):
            answer = percentile([float(r["answer_ms"]) for r in v.results], 50)
            print(f"  {v.name}: ResultMessage after {answer:.0f} ms p50 (the CLI then exits)")
    if any(v.bursts for v in variants):
        print(
            f"\nClaude throughput: {burst} turns at once in the variant's one process (the session's worker, "
            f"or the plain SDK's {burst} query() / client contexts), {rounds} rounds (turns/s, best round); "
            "CLI CPU and own process CPU = the round's / turns; RSS of that process (not its CLIs) after the rounds\n"
        )
        print(
            "| variant | turns/s | rounds | CLI CPU s/turn, per round | own process CPU s/turn, per round "
            "| RSS MiB | vs plain |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for v in variants:
            if v.bursts:
                print(
                    f"| {v.name} | {max(v.bursts):.2f} | {', '.join(f'{b:.2f}' for b in v.bursts)} "
                    f"| {', '.join(f'{c:.2f}' for c in v.burst_cli_cpu)} "
                    f"| {', '.join(f'{c:.2f}' for c in v.burst_self_cpu)} | {v.rss_kib / 1024:.0f} "
                    f"| {ratios(v, lambda x: max(x.bursts) if x.bursts else 0.0)} |"
                )
        for v in variants:
            steps = v.burst_steps
            if steps and all([s[0] for s in turn] == [s[0] for s in steps[0]] for turn in steps):
                cells = [
                    f"{name} {percentile([t[i][2] for t in steps], 50):.0f} "
                    f"(waited {percentile([t[i][1] for t in steps], 50):.0f})"
                    for i, (name, *_) in enumerate(steps[0])
                ]
                print(
                    f"  {v.name}, throughput rounds: step runs p50 ms (scheduled -> started wait): {', '.join(cells)}"
                )


# Issue 25's goals table: per framework, sessionflow's variant and its durable peers (the row is
# met only against every peer listed). Claude has none; its row is built apart (`_print_goals`).
GOAL_ROWS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("openai-agents", "sessionflow+openai-agents", ("temporalio-openai-agents plugin",)),
    (
        "openai-agents, local reads",
        "sessionflow+openai-agents, local reads",
        ("temporalio-openai-agents plugin",),
    ),
    (
        "pydantic-ai",
        "sessionflow+pydantic-ai",
        ("pydantic-ai TemporalDurability", "pydantic-ai TemporalAgent"),
    ),
    (
        "pydantic-ai, local reads",
        "sessionflow+pydantic-ai, local reads",
        ("pydantic-ai TemporalDurability", "pydantic-ai TemporalAgent"),
    ),
    ("langgraph", "sessionflow+langgraph", ("temporalio-langgraph plugin",)),
    ("langgraph, local reads", "sessionflow+langgraph, local reads", ("temporalio-langgraph plugin",)),
    ("google-adk", "sessionflow+google-adk", ("temporalio-google-adk plugin",)),
    ("google-adk, local reads", "sessionflow+google-adk, local reads", ("temporalio-google-adk plugin",)),
    ("strands-agents", "sessionflow+strands-agents", ("temporalio-strands-agents plugin",)),
    (
        "strands-agents, local reads",
        "sessionflow+strands-agents, local reads",
        ("temporalio-strands-agents plugin",),
    ),
)
# Issue 49's goals against each durable peer, in one run: p50 <= 0.8x, throughput >= 1.3x,
# history bytes per tool turn <= 1.0x.
GOAL_P50, GOAL_THROUGHPUT, GOAL_HISTORY = 0.8, 1.3, 1.0
SHORT_PEERS = {
    "temporalio-openai-agents plugin": "plugin",
    "pydantic-ai TemporalDurability": "TemporalDurability",
    "pydantic-ai TemporalAgent": "TemporalAgent",
    "temporalio-langgraph plugin": "plugin",
    "temporalio-google-adk plugin": "plugin",
    "temporalio-strands-agents plugin": "plugin",
    CLAUDE_PLAINS[0]: "plain query()",
}


def _p50(variant: Variant) -> float | None:
    return percentile(variant.ms, 50) if variant.ms else None


def _best_burst(variant: Variant) -> float | None:
    return max(variant.bursts) if variant.bursts else None


def _history(variant: Variant) -> float | None:
    if variant.size:
        return percentile(variant.size, 50)
    sizes = [float(r["bytes"]) for r in variant.results if "bytes" in r]
    return percentile(sizes, 50) if sizes else None


def _goal_cells(
    mine: Variant,
    peers: list[Variant],
    measure: Callable[[Variant], float | None],
    met: Callable[[float], bool],
    missing: str,
) -> tuple[str, str]:
    """The ratio cell (one ratio per peer, each named when there are several) and its "met?" cell:
    "yes" when met against every peer, "no" against none, else which peers."""
    ratios: list[tuple[str, float]] = []
    value = measure(mine)
    for peer in peers:
        theirs = measure(peer)
        if value is not None and theirs:
            ratios.append((SHORT_PEERS.get(peer.name, peer.name), value / theirs))
    if not ratios:
        return missing, "-"
    named = len(ratios) > 1
    cell = "; ".join(f"{r:.2f}x{f' vs {n}' if named else ''}" for n, r in ratios)
    hits = [n for n, r in ratios if met(r)]
    verdict = "yes" if len(hits) == len(ratios) else "no" if not hits else f"vs {', '.join(hits)} only"
    return cell, verdict


def _print_goals(
    variants: list[Variant], claude: list[Variant], args: argparse.Namespace, load: tuple[Any, Any, str]
) -> None:
    """One table of issue 25's goals, a row per framework that ran (see the module docstring)."""
    by_name = {v.name: v for v in variants + claude}
    rows: list[str] = []
    for framework, mine_name, peer_names in GOAL_ROWS:
        mine = by_name.get(mine_name)
        peers = [by_name[p] for p in peer_names if p in by_name]
        if mine is None or not peers:
            continue
        no_burst = "not measured (--burst 0)"
        cells = [
            *_goal_cells(mine, peers, _p50, lambda r: r <= GOAL_P50, "not measured"),
            *_goal_cells(mine, peers, _best_burst, lambda r: r >= GOAL_THROUGHPUT, no_burst),
            *_goal_cells(mine, peers, _history, lambda r: r <= GOAL_HISTORY, "not measured"),
        ]
        against = ", ".join(p.name for p in peers)
        rows.append(f"| {framework} | {mine_name} vs {against} | {' | '.join(cells)} |")
    session, plain = by_name.get(CLAUDE_SESSION), by_name.get(CLAUDE_PLAINS[0])
    if session is not None and plain is not None and session.results and plain.results:

        def cli_cpu(variant: Variant) -> float | None:
            cpu = [r["cli_user_s"] + r["cli_sys_s"] for r in variant.results]
            return percentile(cpu, 50) if cpu else None

        p50, p50_met = _goal_cells(session, [plain], _p50, lambda r: r <= GOAL_P50, "not measured")
        cpu, _ = _goal_cells(session, [plain], cli_cpu, lambda r: r <= GOAL_P50, "-")
        if args.claude_burst > 0 and session.bursts and plain.bursts:
            tp, tp_met = _goal_cells(session, [plain], _best_burst, lambda r: r >= GOAL_THROUGHPUT, "-")
            tp = f"{tp} ({args.claude_burst} at once)"
        else:
            tp, tp_met = "not measured (--claude-burst 0)", "-"
        size = _history(session)
        rows.append(
            f"| claude-agent-sdk | {CLAUDE_SESSION} vs {CLAUDE_PLAINS[0]} (no durable peer) "
            f"| {p50}; CLI CPU/turn {cpu} | {'yes' if p50_met == 'yes' else 'no (vs plain)'} "
            f"| {tp} | {'yes' if tp_met == 'yes' else 'no (vs plain)' if tp_met == 'no' else tp_met} "
            f"| {f'{size:.0f} B/turn' if size is not None else '-'}; no durable peer | n/a |"
        )
    if not rows:
        return
    load_start, load_end, started_at = load
    print(
        f"\nissue 49 goals: sessionflow / durable peer, one interleaved run started {started_at}, "
        f"load average {', '.join(f'{x:.2f}' for x in load_start)} -> "
        f"{', '.join(f'{x:.2f}' for x in load_end)} ({os.cpu_count()} CPUs)\n"
    )
    print(
        f"| framework | compared | p50 ratio (goal <= {GOAL_P50}) | met? "
        f"| throughput ratio (goal >= {GOAL_THROUGHPUT}) | met? "
        f"| history bytes ratio (goal <= {GOAL_HISTORY}) | met? |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(row)
    unstreamed = by_name.get("sessionflow+openai-agents, unstreamed")
    plugin = by_name.get("temporalio-openai-agents plugin")
    if unstreamed is not None and plugin is not None:
        cells = [
            _goal_cells(unstreamed, [plugin], m, lambda r: False, "-")[0]
            for m in (_p50, _best_burst, _history)
        ]
        print(
            f"\nsessionflow+openai-agents, unstreamed (model calls in one piece, as the plugin makes them) "
            f"vs the plugin: p50 {cells[0]}, throughput {cells[1]}, history bytes {cells[2]}"
        )
    if any(by_name.get(mine) for _, mine, _ in GOAL_ROWS):
        print(
            f"\np50: of the tool turn, {args.turns} turns per variant; throughput: best of {args.burst_rounds} "
            f"rounds of {args.burst} turns at once on one worker; history: describe()'s history_size_bytes "
            "after the turn, p50. A row with two peers is met only against both."
        )
    if session is not None and plain is not None and session.results:
        print(
            f"claude-agent-sdk: {args.claude_turns} turns per variant, throughput best of {args.burst_rounds} "
            f"rounds of {args.claude_burst} turns at once. No durable peer exists (the goal's peer is plain query() plus steps of the "
            "user's own), so the row compares with plain query(), which has no durability at all. A peer "
            "built on query() runs the same CLI plus its steps: at least as slow and as much CPU, at most "
            "as many turns/s. So a ratio vs plain that meets a goal meets it vs any such peer too; one "
            "that misses it ('no (vs plain)') only bounds the ratio vs that peer."
        )


def _pydantic_durability_missing() -> str | None:
    """Why the installed Pydantic AI cannot run the `TemporalDurability` peer, or None if it can."""
    try:
        temporal = importlib.import_module("pydantic_ai.durable_exec.temporal")
    except ImportError as error:
        return f"pydantic_ai.durable_exec.temporal does not import: {error}"
    if not hasattr(temporal, "TemporalDurability"):
        version = importlib.metadata.version("pydantic-ai-slim")
        return f"pydantic-ai-slim {version} has no TemporalDurability capability (TemporalAgent's successor)"
    return None


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--only", default="")
    parser.add_argument(
        "--burst",
        type=int,
        default=50,
        help="concurrent turns per throughput round, on one worker process (0: skip)",
    )
    parser.add_argument("--burst-rounds", type=int, default=2)
    parser.add_argument(
        "--claude-turns", type=int, default=5, help="measured turns per Claude variant (each starts a CLI)"
    )
    parser.add_argument("--claude-warmup", type=int, default=1)
    parser.add_argument(
        "--claude-burst",
        type=int,
        default=5,
        help="concurrent turns per Claude throughput round, `--burst-rounds` rounds (0: skip)",
    )
    args = parser.parse_args()
    from sessionflow.temporal import DevServer, DevServerConfig

    variants = [
        Variant("sessionflow+openai-agents", _ws("sf-openai"), "workspace env"),
        Variant("sessionflow+openai-agents, unstreamed", _ws("sf-openai-whole"), "workspace env"),
        Variant("sessionflow+openai-agents, local reads", _ws("sf-openai-local"), "workspace env"),
        Variant(
            "temporalio-openai-agents plugin",
            _isolated("bench/_peer_openai.py", PEER_OPENAI),
            "isolated uv env",
        ),
        Variant("plain openai-agents", _ws("plain-openai"), "workspace env"),
        Variant("sessionflow+pydantic-ai", _ws("sf-pydantic"), "workspace env"),
        Variant("sessionflow+pydantic-ai, local reads", _ws("sf-pydantic-local"), "workspace env"),
        _pydantic_peer("durability", "pydantic-ai TemporalDurability"),
        _pydantic_peer("temporal-agent", "pydantic-ai TemporalAgent"),
        Variant("plain pydantic-ai", _ws("plain-pydantic"), "workspace env"),
        Variant("sessionflow+langgraph", _ws("sf-langgraph"), "workspace env"),
        Variant("sessionflow+langgraph, local reads", _ws("sf-langgraph-local"), "workspace env"),
        Variant(
            "temporalio-langgraph plugin",
            _isolated("bench/_peer_langgraph.py", _with_workspace_versions(PEER_LANGGRAPH, LANGGRAPH_SHARED)),
            "isolated uv env",
        ),
        Variant("plain langgraph", _ws("plain-langgraph"), "workspace env"),
        Variant("sessionflow+google-adk", _ws("sf-adk"), "workspace env"),
        Variant("sessionflow+google-adk, local reads", _ws("sf-adk-local"), "workspace env"),
        Variant(
            "temporalio-google-adk plugin",
            _isolated("bench/_peer_adk.py", _with_workspace_versions(PEER_ADK, ADK_SHARED)),
            "isolated uv env",
        ),
        Variant("plain google-adk", _ws("plain-adk"), "workspace env"),
        Variant("sessionflow+strands-agents", _strands_ws("sf-strands"), "strands env"),
        Variant("sessionflow+strands-agents, local reads", _strands_ws("sf-strands-local"), "strands env"),
        Variant(
            "temporalio-strands-agents plugin",
            _isolated("bench/_peer_strands.py", ()),
            "isolated uv env",
        ),
        Variant("plain strands-agents", _strands_ws("plain-strands"), "strands env"),
    ]
    claude = [
        _claude_peer("session", CLAUDE_SESSION),
        _claude_peer("plain-query", CLAUDE_PLAINS[0]),
        _claude_peer("plain-client", CLAUDE_PLAINS[1]),
    ]
    if args.only:
        variants = [v for v in variants if any(o in v.name for o in args.only.split(","))]
        claude = [v for v in claude if any(o in v.name for o in args.only.split(","))]
    # Older Pydantic AI releases have only TemporalAgent; the other variants still run on them.
    if any(v.name == "pydantic-ai TemporalDurability" for v in variants) and (
        missing := _pydantic_durability_missing()
    ):
        print(f"pydantic-ai TemporalDurability: skipped, {missing}")
        variants = [v for v in variants if v.name != "pydantic-ai TemporalDurability"]
    _prepare_strands(variants)
    load_start = os.getloadavg()
    started_at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"load average at start: {load_start}, cpus {os.cpu_count()}, {started_at}")
    with tempfile.TemporaryDirectory(prefix="sessionflow-peers-") as tmp, ScriptedModelServer() as model:
        server = DevServer(DevServerConfig(data_dir=Path(tmp)))
        handle = await server.start()
        try:
            keys = {variant.name: f"v{index}" for index, variant in enumerate(variants + claude)}
            for variant in variants + claude:
                key = keys[variant.name]
                env = dict(os.environ)
                env["BENCH_MODEL_URL"] = model.base_url(key)
                env["BENCH_ANTHROPIC_URL"] = model.base_url(key, api="anthropic")
                env["BENCH_GEMINI_URL"] = model.base_url(key, api="gemini")
                # The ADK plugin's model activity builds its Gemini client from ADK's registry,
                # which reads the base URL and key from the environment.
                env["GOOGLE_GEMINI_BASE_URL"] = model.base_url(key, api="gemini")
                env["GOOGLE_API_KEY"] = "x"
                env["OPENAI_BASE_URL"] = model.base_url(key)
                env["OPENAI_API_KEY"] = "x"
                env["OPENAI_AGENTS_DISABLE_TRACING"] = "1"
                # The caller's PYTHONPATH stays after the repository: it can put another copy
                # of a package first (`bench/HISTORY.md`: the Claude adapter as committed).
                env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
                variant.argv = [*variant.argv, handle.address]
                started = time.monotonic()
                variant.start(env)
                print(
                    f"{variant.name}: ready in {time.monotonic() - started:.1f} s ({variant.env_note}) {variant.versions}",
                    flush=True,
                )
            for rnd in range(args.warmup + args.turns if variants else 0):
                shift = rnd % len(variants)
                order = variants[shift:] + variants[:shift]
                for variant in order:
                    key = f"v{variants.index(variant)}"
                    _script(model, key)
                    result = variant.turn()
                    if "a:1" not in str(result.get("answer")):
                        raise RuntimeError(f"{variant.name}: unexpected answer {result}")
                    if model.remaining(key):
                        raise RuntimeError(f"{variant.name}: {model.remaining(key)} replies left")
                    if "langgraph" in variant.name:
                        _check_langgraph_turn(variant.name, model.requests(key)[-2:])
                    if rnd >= args.warmup:
                        variant.ms.append(float(result["ms"]))
                        if "events" in result:
                            variant.events.append(int(result["events"]))
                            variant.size.append(int(result["bytes"]))
            for rnd in range(args.burst_rounds if args.burst > 0 and variants else 0):
                shift = rnd % len(variants)
                for variant in variants[shift:] + variants[:shift]:
                    key = f"v{variants.index(variant)}"
                    model.reset(key)
                    model.respond(key, _respond_by_conversation)
                    result = variant.ask(f"burst {args.burst}")
                    model.respond(key, None)
                    if result["ok"] != args.burst or len(model.requests(key)) != 2 * args.burst:
                        raise RuntimeError(
                            f"{variant.name}: {result['ok']}/{args.burst} answers right, "
                            f"{len(model.requests(key))} model requests (expected {2 * args.burst})"
                        )
                    variant.bursts.append(float(result["turns"]) / float(result["seconds"]))
                    variant.rss_kib = max(variant.rss_kib, int(result["rss_kib"]))
                    print(
                        f"  burst round {rnd + 1}: {variant.name}: {variant.bursts[-1]:.1f} turns/s",
                        flush=True,
                    )
            if claude:
                _claude_rounds(model, claude, keys, args.claude_turns, args.claude_warmup)
                if args.claude_burst > 0:
                    _claude_bursts(model, claude, keys, args.claude_burst, args.burst_rounds)
        finally:
            for variant in variants + claude:
                variant.stop()
            await server.stop()
    load_end = os.getloadavg()
    print(f"load average at end: {load_end}")
    by_name = {v.name: v for v in variants}
    # Each variant's durable peers (the first is the one it is mainly compared with) and plain peer.
    pairs: dict[str, tuple[list[str], str]] = {
        "sessionflow+openai-agents": (["temporalio-openai-agents plugin"], "plain openai-agents"),
        "sessionflow+openai-agents, unstreamed": (["temporalio-openai-agents plugin"], "plain openai-agents"),
        "sessionflow+openai-agents, local reads": (
            ["temporalio-openai-agents plugin"],
            "plain openai-agents",
        ),
        "sessionflow+pydantic-ai, local reads": (
            ["pydantic-ai TemporalDurability", "pydantic-ai TemporalAgent"],
            "plain pydantic-ai",
        ),
        "sessionflow+langgraph, local reads": (["temporalio-langgraph plugin"], "plain langgraph"),
        "sessionflow+pydantic-ai": (
            ["pydantic-ai TemporalDurability", "pydantic-ai TemporalAgent"],
            "plain pydantic-ai",
        ),
        # Pydantic AI's deprecated API against its replacement: what migrating changes.
        "pydantic-ai TemporalAgent": (["pydantic-ai TemporalDurability"], "plain pydantic-ai"),
        "sessionflow+langgraph": (["temporalio-langgraph plugin"], "plain langgraph"),
        "sessionflow+google-adk": (["temporalio-google-adk plugin"], "plain google-adk"),
        "sessionflow+google-adk, local reads": (["temporalio-google-adk plugin"], "plain google-adk"),
        "sessionflow+strands-agents": (["temporalio-strands-agents plugin"], "plain strands-agents"),
        "sessionflow+strands-agents, local reads": (
            ["temporalio-strands-agents plugin"],
            "plain strands-agents",
        ),
    }
    # Pydantic AI has two durable peers, so a ratio against either names it in the cell.
    peer_labels = {
        "pydantic-ai TemporalDurability": "TemporalDurability",
        "pydantic-ai TemporalAgent": "TemporalAgent",
    }

    def vs_peers(name: str, measure: Callable[[Variant], float | None]) -> str:
        mine = measure(by_name[name])
        cells: list[str] = []
        for peer in pairs[name][0] if name in pairs else []:
            theirs = measure(by_name[peer]) if peer in by_name else None
            if mine is not None and theirs:
                label = f" vs {peer_labels[peer]}" if peer in peer_labels else ""
                cells.append(f"{mine / theirs:.2f}x{label}")
        return "; ".join(cells) or "-"

    if variants:
        print(
            f"\nturn = model -> 2 parallel read tools -> model -> answer; {args.turns} turns per variant, interleaved\n"
        )
        print(
            "| variant | env | p50 ms | p95 ms | events/turn | history bytes/turn | p50 vs durable peer | p50 vs plain |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for variant in variants:
            p50 = percentile(variant.ms, 50)
            ev = f"{percentile(variant.events, 50):.0f}" if variant.events else "-"
            sz = f"{percentile(variant.size, 50):.0f}" if variant.size else "-"
            vs_peer = vs_peers(variant.name, lambda v: percentile(v.ms, 50))
            vs_plain = "-"
            for name, (peers, plain) in pairs.items():
                if variant.name in (name, *peers) and plain in by_name:
                    vs_plain = f"{p50 / percentile(by_name[plain].ms, 50):.2f}x"
            print(
                f"| {variant.name} | {variant.env_note} | {p50:.1f} | {percentile(variant.ms, 95):.1f} | {ev} | {sz} | {vs_peer} | {vs_plain} |"
            )
        if any(v.bursts for v in variants):
            print(
                f"\nthroughput: {args.burst} turns at once on the variant's one worker process, "
                f"{args.burst_rounds} rounds (turns/s, best round); RSS of that process after the rounds\n"
            )
            print("| variant | turns/s | rounds | RSS MiB | vs durable peer |")
            print("| --- | --- | --- | --- | --- |")
            for variant in variants:
                if not variant.bursts:
                    continue
                best = max(variant.bursts)
                vs_peer = vs_peers(variant.name, lambda v: max(v.bursts) if v.bursts else None)
                rounds = ", ".join(f"{b:.1f}" for b in variant.bursts)
                print(
                    f"| {variant.name} | {best:.1f} | {rounds} | {variant.rss_kib / 1024:.0f} | {vs_peer} |"
                )
    if claude:
        _print_claude(claude, args.claude_turns, args.claude_burst, args.burst_rounds)
    _print_goals(variants, claude, args, (load_start, load_end, started_at))
    print("\nversions:")
    for variant in variants + claude:
        print(f"  {variant.name}: {variant.versions}")


if __name__ == "__main__":
    asyncio.run(main())
