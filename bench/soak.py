"""Chaos soak: many sessions, workers SIGKILLed at random, the dev server killed once.

    uv run python -m bench.soak                      # 200 sessions, kills every few seconds
    uv run python -m bench.soak --sessions 20 --kills 2   # the CI smoke size
    uv run python -m bench.soak --rolling            # 4 workers restarted one by one (SIGTERM, some SIGKILL)

With ``--rolling`` the workers are restarted in turn, as a rolling deploy does: most get
SIGTERM and shut down gracefully (running steps get the grace period) while their
replacement starts, every third gets SIGKILL; approvals wait a while before they are
answered, so restarts happen under waiting approvals too. An ``outcome_unknown`` is then
explained only by a recorded kill of the worker that ran the step (read from the history).

Each session runs 3 turns that use every effect class and one approval. At the end the
soak checks that every turn is final, no message is lost or duplicated, no
non-idempotent tool ran twice, repeated idempotent writes carried one key, and every
`outcome_unknown` is explained by a killed worker.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from sessionflow import (
    AgentEventType,
    AgentSessionClient,
    AgentSnapshot,
    AgentStatus,
    SessionExistsError,
    SessionTimings,
    ToolEffect,
    ToolPolicy,
)
from sessionflow.temporal import (
    SHUTDOWN_GRACE_ENV,
    DevServer,
    DevServerConfig,
    StepHistoryEntry,
    free_port,
    read_step_history,
)
from sessionflow.testing import AgentTestStack, InvocationLog, save_scripted_flow, write_script

TIMINGS = SessionTimings(
    model_start_to_close=timedelta(seconds=60),
    # Generous enough that a loaded machine's late heartbeats are not mistaken for a crash.
    model_heartbeat_timeout=timedelta(seconds=5),
    model_schedule_to_close=timedelta(minutes=5),
    tool_start_to_close=timedelta(seconds=60),
    tool_heartbeat_timeout=timedelta(seconds=5),
    tool_schedule_to_close=timedelta(minutes=5),
    retry_initial_interval=timedelta(milliseconds=200),
    heartbeat_interval=timedelta(milliseconds=500),
)
POLICIES = {
    "lookup": ToolPolicy(effect=ToolEffect.READ),
    "upsert": ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE),
    "charge": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
    "notify": ToolPolicy(effect=ToolEffect.UNCLASSIFIED, requires_approval=False),
}
TOOLS: dict[str, dict[str, Any]] = {
    "lookup": {"effect": "read", "sleep": 0.3, "output": "found"},
    "upsert": {"effect": "idempotent_write", "sleep": 0.3, "output": "upserted"},
    "charge": {"effect": "non_idempotent_write", "sleep": 0.3, "output": "charged"},
    "notify": {"sleep": 0.3, "output": "notified"},
}
SINGLE_ATTEMPT = {"charge", "notify"}


def _call(tool_call_id: str, name: str, n: int) -> dict[str, Any]:
    return {"id": tool_call_id, "name": name, "arguments": {"n": n}}


def script(n: int) -> list[list[dict[str, Any]]]:
    """Turn 1: a read and an idempotent write in parallel. Turn 2: an approved charge.
    Turn 3: an unclassified notify without approval plus a read."""
    return [
        [{"tool_calls": [_call("r1", "lookup", n), _call("w1", "upsert", n)]}, {"text": f"turn 1 done {n}"}],
        [{"tool_calls": [_call("c1", "charge", n)]}, {"text": f"turn 2 done {n}"}],
        [
            {"tool_calls": [_call("u1", "notify", n), _call("r2", "lookup", n + 1)]},
            {"text": f"turn 3 done {n}"},
        ],
    ]


@dataclass
class SoakReport:
    sessions: int
    turns_final: int = 0
    turns_failed: int = 0
    worker_kills: int = 0
    worker_sigterms: int = 0
    server_restarts: int = 0
    sigterm_exits: list[str] = field(default_factory=lambda: [])
    """SIGTERMed workers that did not exit 0 (a graceful shutdown exits 0)."""
    outcome_unknown_causes: Counter[str] = field(default_factory=lambda: Counter[str]())
    tool_runs: Counter[str] = field(default_factory=lambda: Counter[str]())
    outcome_unknown: int = 0
    calls_finished: int = 0
    succeeded_without_run: list[str] = field(default_factory=lambda: [])
    unexplained_outcome_unknown: list[str] = field(default_factory=lambda: [])
    duplicate_single_attempt: list[str] = field(default_factory=lambda: [])
    idempotent_key_mismatch: list[str] = field(default_factory=lambda: [])
    message_problems: list[str] = field(default_factory=lambda: [])
    unfinished: list[str] = field(default_factory=lambda: [])
    failure_reasons: Counter[str] = field(default_factory=lambda: Counter[str]())
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (
            not (
                self.unexplained_outcome_unknown
                or self.succeeded_without_run
                or self.duplicate_single_attempt
                or self.idempotent_key_mismatch
                or self.message_problems
                or self.unfinished
                or self.sigterm_exits
            )
            and self.turns_final == 3 * self.sessions
        )

    def lines(self) -> list[str]:
        return [
            f"sessions {self.sessions}, turns final {self.turns_final}/{3 * self.sessions} "
            f"({self.turns_failed} ended failed), in {self.seconds:.0f} s",
            f"worker SIGKILLs {self.worker_kills}, SIGTERMs {self.worker_sigterms} "
            f"({len(self.sigterm_exits)} did not exit 0), dev server restarts {self.server_restarts}",
            "tool runs " + ", ".join(f"{k} {v}" for k, v in sorted(self.tool_runs.items())),
            f"tool calls finished {self.calls_finished}; succeeded without a recorded run "
            f"{len(self.succeeded_without_run)}",
            f"outcome_unknown {self.outcome_unknown}, unexplained {len(self.unexplained_outcome_unknown)}"
            + "".join(f"; {n} by {cause}" for cause, n in sorted(self.outcome_unknown_causes.items())),
            f"single-attempt tools run twice {len(self.duplicate_single_attempt)}; "
            f"idempotent writes with differing keys {len(self.idempotent_key_mismatch)}",
            f"message problems {len(self.message_problems)}; unfinished sessions {len(self.unfinished)}",
            *(f"  failed turns: {n} x {reason}" for reason, n in self.failure_reasons.most_common(5)),
            *(
                f"  problem: {p}"
                for p in [*self.unfinished, *self.message_problems, *self.unexplained_outcome_unknown][:5]
            ),
            "OK" if self.ok else "FAILED",
        ]


async def _retrying(what: str, action: Any, deadline: float) -> Any:
    """Client calls fail while the dev server restarts: retry until the deadline."""
    delay = 0.1
    while True:
        try:
            return await action()
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)


async def _drive(
    sessions: AgentSessionClient, session_id: str, deadline: float, approve_after: float = 0.0
) -> AgentSnapshot:
    """Run the session's 3 turns; an approval is answered `approve_after` seconds after it is seen."""
    seen_at: dict[str, float] = {}

    async def start() -> None:
        try:
            await sessions.start_session(session_id, f"{session_id} turn 1")
        except SessionExistsError:
            pass  # an earlier try started it, and only its answer was lost

    await _retrying("start", start, deadline)
    for turn in (1, 2, 3):
        if turn > 1:
            await _retrying(
                "send",
                lambda t=turn: sessions.send_user_message(
                    session_id, f"{session_id} turn {t}", message_id=f"{session_id}-turn-{t}"
                ),
                deadline,
            )
        while True:
            snapshot: AgentSnapshot = await _retrying(
                "snapshot", lambda: sessions.get_agent_snapshot(session_id), deadline
            )
            for interrupt in snapshot.pending_interrupts:
                if (
                    time.monotonic() - seen_at.setdefault(interrupt.interrupt_id, time.monotonic())
                    < approve_after
                ):
                    continue  # the approval waits, as a person's does
                await _retrying(
                    "approve",
                    lambda i=interrupt: sessions.resolve_interrupt(session_id, i.interrupt_id, approved=True),
                    deadline,
                )
            state = snapshot.state
            if state and state.turn_count >= turn and state.status is AgentStatus.WAITING_FOR_USER_MESSAGE:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{session_id} turn {turn} did not end")
            await asyncio.sleep(0.2)
    return snapshot


async def run_soak(
    sessions: int = 200,
    *,
    kills: int | None = None,
    kill_every: tuple[float, float] = (2.0, 5.0),
    restart_server: bool = True,
    timeout: float = 900.0,
    seed: int = 7,
    keep_folder: Path | None = None,
    workers: int = 2,
    rolling: bool = False,
    sigkill_every: int = 3,
    grace: float = 3.0,
    approve_after: float = 0.0,
) -> SoakReport:
    """Run the soak; `kills` caps the worker SIGKILLs (None: keep killing until the end).

    `rolling`: restart the `workers` workers in turn instead, each with SIGTERM (running
    steps get `grace` seconds) except every `sigkill_every`-th restart, a SIGKILL; `kills`
    then caps the restarts of both kinds.
    """
    rng = random.Random(seed)
    report = SoakReport(sessions=sessions)
    started = time.monotonic()
    deadline = started + timeout
    with tempfile.TemporaryDirectory(prefix="sessionflow-soak-") as folder:
        root = Path(folder)
        if keep_folder is not None:
            root = keep_folder
        config = DevServerConfig(data_dir=root / "server", port=free_port())
        server = DevServer(config)
        handle = await server.start()
        state_dir = root / "state"
        flow = save_scripted_flow(state_dir, "soak", tool_policies=POLICIES, timings=TIMINGS)
        ids = [f"soak-{n:04d}" for n in range(sessions)]
        for n, session_id in enumerate(ids):
            write_script(state_dir, session_id, script(n), TOOLS)
        killed_pids: set[int] = set()
        # Each stopped worker's pid: the signal it got and when (wall clock, as the tool log's).
        kills_at: dict[int, tuple[signal.Signals, float]] = {}
        async with AgentTestStack(
            state_dir,
            [flow],
            server_address=handle.address,
            worker_env={SHUTDOWN_GRACE_ENV: str(grace)},
        ) as stack:
            client_sessions = stack.sessions(flow)
            live = [await stack.start_worker() for _ in range(workers)]
            limit = asyncio.Semaphore(50)

            async def one(session_id: str) -> AgentSnapshot:
                async with limit:
                    return await _drive(client_sessions, session_id, deadline, approve_after)

            drivers = asyncio.gather(*(one(s) for s in ids), return_exceptions=True)
            restart_at = max(1, (kills or 6) // 2)
            outage: tuple[float, float] | None = None
            while not drivers.done():
                await asyncio.wait([drivers], timeout=rng.uniform(*kill_every))
                restarts = report.worker_kills + report.worker_sigterms
                if drivers.done() or (kills is not None and restarts >= kills):
                    continue
                if rolling:
                    victim = restarts % len(live)
                    kills_at[live[victim].pid] = (
                        signal.SIGKILL if restarts % sigkill_every == 1 else signal.SIGTERM,
                        time.time(),
                    )
                    if kills_at[live[victim].pid][0] is signal.SIGKILL:
                        killed_pids.add(live[victim].pid)
                        live[victim].kill()
                        report.worker_kills += 1
                    else:
                        live[victim].sigterm()  # it drains on its own while its replacement starts
                        report.worker_sigterms += 1
                    live[victim] = await stack.start_worker()
                    continue
                victim = rng.randrange(len(live))
                killed_pids.add(live[victim].pid)
                kills_at[live[victim].pid] = (signal.SIGKILL, time.time())
                live[victim].kill()
                report.worker_kills += 1
                live[victim] = await stack.start_worker()
                if restart_server and report.server_restarts == 0 and report.worker_kills >= restart_at:
                    down = time.time()
                    await _kill_and_restart(config, handle.pid)
                    outage = (down, time.time())
                    report.server_restarts += 1
            results = drivers.result()
            snapshots: dict[str, AgentSnapshot] = {}
            for session_id, result in zip(ids, results, strict=True):
                if isinstance(result, BaseException):
                    report.unfinished.append(f"{session_id}: {result!r}")
                else:
                    snapshots[session_id] = result
            for worker in stack.workers:
                if kills_at.get(worker.pid, (None, 0.0))[0] is signal.SIGTERM:
                    try:
                        code = await asyncio.wait_for(asyncio.to_thread(worker.process.wait), grace + 60)
                    except TimeoutError:
                        code = None
                    if code != 0:
                        report.sigterm_exits.append(
                            f"worker {worker.pid} exited {code}: {worker.log()[-1500:]}"
                        )
            log = InvocationLog(state_dir / "invocations.jsonl")
            await _check(
                report, client_sessions, snapshots, log, killed_pids, outage, kills_at if rolling else None
            )
        await DevServer(config).stop()
    report.seconds = time.monotonic() - started
    return report


async def _kill_and_restart(config: DevServerConfig, pid: int) -> None:
    """SIGKILL the dev server, then start it again on the same port and database file."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    await asyncio.sleep(0.5)
    await DevServer(config).start()


async def _check(
    report: SoakReport,
    sessions: AgentSessionClient,
    snapshots: dict[str, AgentSnapshot],
    log: InvocationLog,
    killed_pids: set[int],
    outage: tuple[float, float] | None,
    kills_at: dict[int, tuple[signal.Signals, float]] | None = None,
) -> None:
    runs = log.entries("tool")
    for entry in runs:
        report.tool_runs[entry["name"]] += 1
    by_call: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for entry in runs:
        by_call[(entry["session"], entry["turn"], entry["tool_call_id"])].append(entry)
    for key, entries in by_call.items():
        if entries[0]["name"] in SINGLE_ATTEMPT and len(entries) > 1:
            report.duplicate_single_attempt.append("/".join(key))
        if entries[0]["name"] == "upsert" and len({e["idempotency_key"] for e in entries}) > 1:
            report.idempotent_key_mismatch.append("/".join(key))
    for session_id, snapshot in snapshots.items():
        state = snapshot.state
        if state is None or state.turn_count != 3 or snapshot.tool_calls or snapshot.pending_interrupts:
            report.unfinished.append(
                f"{session_id}: turns {state.turn_count if state else None}, "
                f"status {state.status.value if state else None}, open calls {len(snapshot.tool_calls)}"
            )
            continue
        report.turns_final += 3
        sequences = [m.sequence for m in snapshot.messages]
        if sequences != list(range(1, len(sequences) + 1)):
            report.message_problems.append(f"{session_id}: sequences {sequences}")
        answers = [m.message.text for m in snapshot.messages if m.message.role.value == "assistant"]
        repeated = sorted({a for a in answers if a and a.startswith("turn ") and answers.count(a) > 1})
        if repeated:
            report.message_problems.append(f"{session_id}: answers stored twice {repeated}")
        history: list[StepHistoryEntry] | None = None
        user_texts = [m.message.text for m in snapshot.messages if m.message.role.value == "user"]
        expected = [f"{session_id} turn {t}" for t in (1, 2, 3)]
        if [t for t in user_texts if t in expected] != expected:
            report.message_problems.append(f"{session_id}: user messages {user_texts}")
        events = (await sessions.list_agent_events(session_id, limit=1000)).events
        for event in events:
            if event.type is AgentEventType.TURN_FAILED:
                report.turns_failed += 1
                report.failure_reasons[str(event.data.get("error"))[:120]] += 1
        for event in events:
            if event.type is not AgentEventType.TOOL_CALL_FINISHED:
                continue
            report.calls_finished += 1
            if event.data["status"] == "succeeded" and not by_call.get(
                (session_id, event.turn_id, str(event.data["tool_call_id"]))
            ):
                report.succeeded_without_run.append(
                    f"{session_id}/{event.turn_id}/{event.data['tool_call_id']}"
                )
            if event.data["status"] == "outcome_unknown":
                report.outcome_unknown += 1
                call_id = str(event.data["tool_call_id"])
                ran = by_call.get((session_id, event.turn_id, call_id), [])
                # A crash explains it: the call ran on a worker we killed (or never reached a
                # worker, because the one that took it died first), or it ran while the dev
                # server was down. Either way the recorded error is a timeout.
                on_killed = all(e["pid"] in killed_pids for e in ran)
                in_outage = outage is not None and any(
                    outage[0] - 30 <= e["at"] <= outage[1] + 30 for e in ran
                )
                error = str(event.data.get("error"))
                where = f"{session_id}/{event.turn_id}/{call_id}"
                if kills_at is None:
                    if "timed out" not in error or not (on_killed or in_outage):
                        report.unexplained_outcome_unknown.append(where)
                    continue
                # Rolling restarts: the worker that ran the step's attempt (its identity in the
                # history) was stopped after the attempt began, by the signal the error shows.
                if history is None:
                    history = await read_step_history(sessions.client, session_id)
                step = next(
                    (h for h in history if h.step_execution_id == f"{event.turn_id}/tool/{call_id}"), None
                )
                cause = _kill_cause(step, error, ran, kills_at)
                if cause is None and in_outage and "timed out" in error:
                    cause = "dev server restart"
                if cause is None:
                    report.unexplained_outcome_unknown.append(f"{where}: {error[:160]}")
                else:
                    report.outcome_unknown_causes[cause] += 1


def _kill_cause(
    step: StepHistoryEntry | None,
    error: str,
    ran: list[dict[str, Any]],
    kills_at: dict[int, tuple[signal.Signals, float]],
) -> str | None:
    """The recorded kill that explains a write's `outcome_unknown`, or None."""
    if step is None or step.worker is None:
        return None
    try:
        pid = int(step.worker.split("@", 1)[0])
    except ValueError:
        return None
    if pid not in kills_at or any(e["pid"] != pid for e in ran):
        return None
    sent, at = kills_at[pid]
    if any(e["at"] > at for e in ran):
        return None  # the write began after the kill: not its doing
    if sent is signal.SIGKILL and "timed out" in error:
        return "SIGKILL"
    if sent is signal.SIGTERM and "shut down" in error:
        return "SIGTERM past the grace period"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument(
        "--kills", type=int, default=None, help="stop killing after this many (default: never)"
    )
    parser.add_argument("--no-server-restart", action="store_true")
    parser.add_argument("--keep", type=Path, default=None, help="keep the server, state and worker logs here")
    parser.add_argument(
        "--rolling", action="store_true", help="4 workers restarted one by one (SIGTERM, every third SIGKILL)"
    )
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: 2, rolling 4)")
    parser.add_argument("--grace", type=float, default=3.0, help="the workers' shutdown grace period (s)")
    parser.add_argument(
        "--approve-after", type=float, default=None, help="seconds an approval waits (default: 0, rolling 3)"
    )
    args = parser.parse_args()
    report = asyncio.run(
        run_soak(
            args.sessions,
            kills=args.kills,
            restart_server=not (args.no_server_restart or args.rolling),
            keep_folder=args.keep,
            workers=args.workers or (4 if args.rolling else 2),
            rolling=args.rolling,
            grace=args.grace,
            approve_after=args.approve_after
            if args.approve_after is not None
            else (3.0 if args.rolling else 0.0),
        )
    )
    print("\n".join(report.lines()))
    print(json.dumps({"ok": report.ok}))
    raise SystemExit(0 if report.ok else 1)


if __name__ == "__main__":
    main()
