"""Claude Agent SDK variants of `bench.peers`: one tool turn, plain and through sessionflow.

    uv run python -m bench.peers --only claude

A turn: the user message "read record 7" -> the model calls `read_record` (a custom tool on an
in-process SDK MCP server, `create_sdk_mcp_server`/`@tool`, `readOnlyHint` so no approval) ->
the model answers with the tool's output. Three children, each a long-lived process driven over
the line protocol of `bench.peers` (one JSON `ready` line, then `turn` -> one JSON line):

- `plain-query`: `claude_agent_sdk.query()` once per turn, with private `CLAUDE_CONFIG_DIR` and
  `HOME` temp dirs (new for every turn), `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`,
  `CLAUDE_CODE_MAX_RETRIES=0`, `setting_sources=[]` and the tool in `allowed_tools`.
- `plain-client`: the same options through `ClaudeSDKClient` (connect, query, receive_response,
  disconnect) once per turn.
- `session`: `claude_agent_session_flow(options, flow_type=...)` served in this process with
  `serve_agent_flows`; one fresh session per turn. Its latency is `start_session(id, prompt)` ->
  the workflow task that processes the second `RunModel` result (history long-poll, no query).

The plain latency runs until `query()` / the client's context is done, i.e. until the CLI has
exited, as a session's model step ends after its CLI has exited. `answer_ms` is until the
`ResultMessage`.

`burst N` runs N turns at once (N `query()` calls or client contexts in this process, or N
sessions on this process's one worker) and answers {"seconds", "turns", "ok", "rss_kib"}, with
the same CPU fields as a turn (over the whole burst); the session's also gives every turn's
steps, [name, ms scheduled -> started, ms started -> completed] each.

**CPU of the CLI processes.** Every process a turn starts (the Claude Code CLI, and whatever it
starts itself: the adapter's hook command, ...) is a descendant of this child. `descendants_cpu()`
counts the user and system time of all of them that ever ran: `getrusage(RUSAGE_CHILDREN)` (the
descendants that exited and were reaped, with their own reaped descendants) plus, for every
descendant still alive (found through `/proc/<pid>/task/*/children`), `utime + stime + cutime +
cstime` from `/proc/<pid>/stat` (its own time and that of its reaped children). It is a counter
that only grows, so a turn's CLI CPU is its value at the end of the turn minus its value at the
end of the previous turn: contiguous windows, so a CLI that outlives a turn (a warm CLI kept for
the next step) or starts between turns is still counted, in the next window. `self_cpu` is the
same window for this process itself (`RUSAGE_SELF`: the SDK's Python side, and for the session
the worker, client and in-process tool). The Temporal dev server's CPU (the parent's child) is
in neither. A 50 ms poller thread also records which descendants it saw (by `comm`), as a check
of how many CLI processes a turn started.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import json
import os
import resource
import sys
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench._peer_loop import rss_kib
from sessionflow.demo import ModelReply, RecordedRequest, ScriptedToolCall

MODEL = "scripted-model"
TOOL = "read_record"
PROMPT = "Read record 7."
TOOL_OUTPUT = "record 7: status ok"
SYSTEM_PROMPT = "You read records."
KINDS = ("plain-query", "plain-client", "session")
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def respond(request: RecordedRequest) -> ModelReply:
    """The turn's two replies, by what the request holds: no tool result yet -> call the tool
    (under whatever name the CLI offers it: `read_record`, or `mcp__bench__read_record` with the
    CLI's MCP prefix); else answer with the result, so the answer proves it reached the model."""
    results = request.tool_results()
    if results:
        return ModelReply.say(f"The record says: {' '.join(results.values())}")
    name = next((n for n in request.tool_names() if n.endswith(TOOL)), TOOL)
    return ModelReply.call(ScriptedToolCall(f"toolu_bench_{request.index:05d}", name, {"key": "7"}))


# -- CPU of this process's descendants ---------------------------------------------------------


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as children:
                found += [int(c) for c in children.read().split()]
        except OSError:
            pass
    return found


def descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = _children(pid)
    while todo:
        child = todo.pop()
        out.append(child)
        todo += _children(child)
    return out


def _stat(pid: int) -> tuple[str, list[str]] | None:
    """`comm` and the fields after it (state first) of /proc/<pid>/stat."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            text = stat.read()
    except OSError:
        return None
    comm = text[text.index("(") + 1 : text.rindex(")")]
    return comm, text[text.rindex(")") + 2 :].split()


def descendants_cpu() -> tuple[float, float]:
    """(user, system) CPU seconds of every descendant this process ever had (see the docstring)."""
    user = system = 0.0
    for pid in descendants(os.getpid()):
        stat = _stat(pid)
        if stat is not None:
            fields = stat[1]  # fields[11:15]: utime, stime, cutime, cstime (stat fields 14-17)
            user += (int(fields[11]) + int(fields[13])) / _CLK_TCK
            system += (int(fields[12]) + int(fields[14])) / _CLK_TCK
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return user + reaped.ru_utime, system + reaped.ru_stime


def self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class ProcessWatch:
    """Polls this process's descendants every `interval` s. `take()` counts the processes first
    seen since the last `take()` (by pid and start time) by their latest `comm`, a direct
    child's under `child:<comm>`: a forked child is named after its parent until it execs, and
    a later poll renames it. Short-lived processes (hook commands) can be missed."""

    def __init__(self, interval: float = 0.05) -> None:
        self._interval = interval
        self._seen: set[tuple[int, str]] = set()
        self._new: dict[tuple[int, str], str] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._run, name="bench-process-watch", daemon=True).start()

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.wait(self._interval):
            for pid in descendants(me):
                stat = _stat(pid)
                if stat is None:
                    continue
                comm, fields = stat
                key = (pid, fields[19])  # start time (stat field 22)
                name = f"child:{comm}" if int(fields[1]) == me else comm  # fields[1]: ppid
                with self._lock:
                    if key in self._new or key not in self._seen:
                        self._seen.add(key)
                        self._new[key] = name

    def take(self) -> dict[str, int]:
        with self._lock:
            new, self._new = self._new, {}
        counts: dict[str, int] = {}
        for name in new.values():
            counts[name] = counts.get(name, 0) + 1
        return counts

    def stop(self) -> None:
        self._stop.set()


# -- the variants ------------------------------------------------------------------------------


def tool_server() -> Any:
    from claude_agent_sdk import ToolAnnotations, create_sdk_mcp_server, tool

    @tool(TOOL, "Read a record by key.", {"key": str}, annotations=ToolAnnotations(readOnlyHint=True))
    async def read_record(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": f"record {args['key']}: status ok"}]}

    return create_sdk_mcp_server("bench", tools=[read_record])


Turn = Callable[[], Awaitable[dict[str, Any]]]
Burst = Callable[[int], Awaitable[dict[str, Any]]]


def _gather_burst(turn: Turn) -> Burst:
    """`count` plain turns at once in this process; answers checked after the clock stops."""

    async def burst(count: int) -> dict[str, Any]:
        start = time.perf_counter()
        results = await asyncio.gather(*(turn() for _ in range(count)))
        seconds = time.perf_counter() - start
        ok = sum(TOOL_OUTPUT in str(r.get("answer")) for r in results)
        return {"seconds": seconds, "turns": count, "ok": ok, "rss_kib": rss_kib()}

    return burst


def _plain_turn(kind: str, base_url: str, workspace: Path) -> Turn:
    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, Message, ResultMessage, query

    server = tool_server()

    async def turn() -> dict[str, Any]:
        stderr: deque[str] = deque(maxlen=20)
        with (
            tempfile.TemporaryDirectory(prefix="bench-claude-config-") as config,
            tempfile.TemporaryDirectory(prefix="bench-claude-home-") as home,
        ):
            options = ClaudeAgentOptions(
                model=MODEL,
                cwd=str(workspace),
                system_prompt=SYSTEM_PROMPT,
                tools=[],
                mcp_servers={"bench": server},
                allowed_tools=[TOOL, f"mcp__bench__{TOOL}"],
                setting_sources=[],
                stderr=stderr.append,  # read, as the adapter reads it (it is not printed)
                env={
                    "ANTHROPIC_BASE_URL": base_url,
                    "ANTHROPIC_API_KEY": "sk-ant-bench",
                    "CLAUDE_CONFIG_DIR": config,
                    "HOME": home,
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                    "CLAUDE_CODE_MAX_RETRIES": "0",
                },
            )
            answer: str | None = None
            answer_ns = 0
            start = time.perf_counter_ns()

            def seen(message: Message) -> None:
                nonlocal answer, answer_ns
                if isinstance(message, ResultMessage):
                    answer, answer_ns = message.result, time.perf_counter_ns()

            if kind == "plain-query":
                async for message in query(prompt=PROMPT, options=options):
                    seen(message)
            else:
                async with ClaudeSDKClient(options) as client:
                    await client.query(PROMPT)
                    async for message in client.receive_response():
                        seen(message)
            end = time.perf_counter_ns()
        if answer is None:
            raise RuntimeError(f"{kind}: no ResultMessage; CLI stderr: {list(stderr)}")
        return {"ms": (end - start) / 1e6, "answer_ms": (answer_ns - start) / 1e6, "answer": answer}

    return turn


async def _session_turn(address: str, base_url: str, workspace: Path) -> tuple[Turn, Burst]:
    from claude_agent_sdk import ClaudeAgentOptions

    from bench._common import parse_activity_timings
    from bench.peers import tail_turn_done
    from sessionflow import AgentSessionClient, connect, serve_agent_flows
    from sessionflow_claude_agent_sdk import claude_agent_session_flow

    options = ClaudeAgentOptions(
        model=MODEL,
        cwd=str(workspace),
        system_prompt=SYSTEM_PROMPT,
        tools=[],
        mcp_servers={"bench": tool_server()},
        env={"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-ant-bench"},
    )
    flow = claude_agent_session_flow(options, flow_type="bench-peer-sf-claude")
    client = await connect(address)
    _background.append(asyncio.create_task(serve_agent_flows(client, [flow])))
    sessions = AgentSessionClient(client, flow)

    async def turn() -> dict[str, Any]:
        session_id = f"peer-sf-claude-{uuid.uuid4().hex[:12]}"
        start = time.perf_counter_ns()
        await sessions.start_session(session_id, PROMPT)
        await tail_turn_done(client, session_id)
        ms = (time.perf_counter_ns() - start) / 1e6
        info = (
            await client.get_workflow_handle(session_id).describe()
        ).raw_description.workflow_execution_info
        history = await client.get_workflow_handle(session_id).fetch_history()
        # Each step's run (ActivityTaskStarted -> Completed), in scheduling order: where the
        # turn's time goes, the CLI runs being inside the model steps.
        steps = [
            [t.activity_type.rsplit(".", 1)[-1], (t.completed - t.started) / 1e6]
            for t in parse_activity_timings(history.events)
        ]
        snapshot = await sessions.get_agent_snapshot(session_id)
        answer = snapshot.messages[-1].message.text if snapshot.messages else None
        await sessions.stop_session(session_id)
        return {
            "ms": ms,
            "events": info.history_length,
            "bytes": info.history_size_bytes,
            "answer": answer,
            "steps": steps,
        }

    async def burst(count: int) -> dict[str, Any]:
        ids = [f"peer-sf-claude-burst-{uuid.uuid4().hex[:12]}" for _ in range(count)]

        async def one(session_id: str) -> None:
            await sessions.start_session(session_id, PROMPT)
            await tail_turn_done(client, session_id)

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in ids))
        seconds = time.perf_counter() - start
        rss = rss_kib()
        ok = 0
        steps: list[list[list[Any]]] = []
        for session_id in ids:
            snapshot = await sessions.get_agent_snapshot(session_id)
            ok += bool(snapshot.messages) and TOOL_OUTPUT in str(snapshot.messages[-1].message.text)
            # Each step's wait for the worker (scheduled -> started) and run (started -> completed).
            history = await client.get_workflow_handle(session_id).fetch_history()
            steps.append(
                [
                    [
                        t.activity_type.rsplit(".", 1)[-1],
                        (t.started - t.scheduled) / 1e6,
                        (t.completed - t.started) / 1e6,
                    ]
                    for t in parse_activity_timings(history.events)
                ]
            )
            await sessions.stop_session(session_id)
        return {"seconds": seconds, "turns": count, "ok": ok, "rss_kib": rss, "steps": steps}

    return turn, burst


_background: list[asyncio.Task[None]] = []


async def main(kind: str, address: str) -> None:
    base_url = os.environ["BENCH_ANTHROPIC_URL"]
    with tempfile.TemporaryDirectory(prefix="bench-claude-workspace-") as workspace:
        if kind == "session":
            turn, burst = await _session_turn(address, base_url, Path(workspace))
        elif kind in KINDS:
            turn = _plain_turn(kind, base_url, Path(workspace))
            burst = _gather_burst(turn)
        else:
            raise SystemExit(f"unknown Claude variant {kind}")
        versions = {n: importlib.metadata.version(n) for n in ("claude-agent-sdk", "temporalio")}
        versions["claude-code-cli"] = str(
            importlib.import_module("claude_agent_sdk._cli_version").__cli_version__
        )
        if kind == "session":  # which copy of the adapter runs (PYTHONPATH can pick another)
            adapter = importlib.import_module("sessionflow_claude_agent_sdk").__file__ or ""
            versions["adapter"] = str(Path(adapter).parent)
        watch = ProcessWatch()
        print(json.dumps({"ready": True, "versions": versions}), flush=True)
        loop = asyncio.get_running_loop()
        last_cli, last_self = descendants_cpu(), self_cpu()
        watch.take()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line or line.strip() == "quit":
                watch.stop()
                return
            result = await (burst(int(line.split()[1])) if line.startswith("burst ") else turn())
            cli, own = descendants_cpu(), self_cpu()
            result |= {
                "cli_user_s": cli[0] - last_cli[0],
                "cli_sys_s": cli[1] - last_cli[1],
                "self_cpu_s": own - last_self,
                "processes": watch.take(),
            }
            last_cli, last_self = cli, own
            print(json.dumps(result), flush=True)


def run() -> None:
    asyncio.run(main(sys.argv[1], sys.argv[2]))
