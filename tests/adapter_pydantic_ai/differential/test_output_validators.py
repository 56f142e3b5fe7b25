"""Output validators, differential against plain Pydantic AI: ``agent.run`` and ``run_stream``.

The agent is docs/output.md's sql_gen.py (pydantic/pydantic-ai at commit
4fda38988f2939fa6ea9cdefcf120693e10ef491), unchanged but for the scripted model. Its
``fake_database.DatabaseConn`` is the docs' test module with two changes a test needs:
``execute`` records every query it runs (the validator's side effect, counted), and a
query calling ``today()``, which PostgreSQL has no function for, raises ``QueryError``,
so the validator asks the model again once.

- ``agent.run``: the validator runs on the final output only (``ctx.partial_output`` is
  False), once per answer; a session runs it exactly as often, although its model step
  streams and publishes partial outputs (issue 39: it used to run on every snapshot too).
- ``run_stream``: ``stream_output()`` runs it on each partial output as well; a flow with
  ``validate_partial_output=True`` runs it on the same snapshots.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, RunContext

from sessionflow import AgentEventType
from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import (
    Built,
    Models,
    Scenario,
    assert_same_run,
    hook_runs,
    run_both,
    unique,
)
from tests.adapter_pydantic_ai.differential.test_streamed_output import partials, session_stream

# -- fake_database.py, as the docs' examples import it ------------------------------------


class QueryError(RuntimeError):
    pass


@dataclass
class DatabaseConn:
    """The docs' fake database; its queries are logged (the log is the worker's resource)."""

    log: InvocationLog | None = None

    async def execute(self, query: str) -> list[dict[str, Any]]:
        assert self.log is not None
        self.log.record("hook", "execute", query=query)
        if "today()" in query:
            raise QueryError("function today() does not exist")
        return [{"id": 123, "name": "John Doe"}]


# -- sql_gen.py ---------------------------------------------------------------------------


class Success(BaseModel):
    sql_query: str


class InvalidRequest(BaseModel):
    error_message: str


Output = Success | InvalidRequest


def sql_gen(models: Models, log: InvocationLog) -> Built:
    agent = Agent[DatabaseConn, Output](
        models.model(),
        output_type=Output,
        deps_type=DatabaseConn,
        instructions="Generate PostgreSQL flavored SQL queries based on user input.",
    )

    @agent.output_validator
    async def validate_sql(ctx: RunContext[DatabaseConn], output: Output) -> Output:
        if isinstance(output, InvalidRequest):
            return output
        try:
            await ctx.deps.execute(f"EXPLAIN {output.sql_query}")
        except QueryError as e:
            raise ModelRetry(f"Invalid query: {e}") from e
        else:
            return output

    @asynccontextmanager
    async def resources() -> AsyncGenerator[Mapping[str, Any]]:
        yield {"log": log}

    return Built(
        agent=agent,
        deps=lambda: DatabaseConn(log),
        deps_resources=resources,
        # Every change of the streamed answer is a snapshot: the most chances to run the
        # validator where `agent.run` would not.
        flow_args={"partial_output_interval": 0},
    )


PROMPT = "get me users who were last active yesterday."
WRONG = {"sql_query": "SELECT * FROM users WHERE last_active::date = today() - interval '1 day'"}
RIGHT = {"sql_query": "SELECT * FROM users WHERE last_active::date = current_date - interval '1 day'"}


async def test_agent_run_validates_each_final_answer_once_as_plain(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="sql-gen",
        build=sql_gen,
        script=[
            ModelReply.call(ScriptedToolCall("call_1", "final_result_Success", WRONG)),
            ModelReply.call(ScriptedToolCall("call_2", "final_result_Success", RIGHT)),
        ],
        turns=[PROMPT],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # Plain: one query per answer, the wrong one refused, the model asked again.
    assert plain.hook_runs == [
        {"name": "execute", "query": f"EXPLAIN {WRONG['sql_query']}"},
        {"name": "execute", "query": f"EXPLAIN {RIGHT['sql_query']}"},
    ]
    assert plain.outputs == [RIGHT] and len(plain.requests[""]) == 2
    assert "Invalid query: function today() does not exist" in str(plain.requests[""][1]["messages"])
    assert_same_run(plain, session)


async def test_run_stream_validates_each_partial_output_as_plain_stream_output(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``validate_partial_output=True``: the snapshots ``stream_output()`` validates, and the end."""
    key = unique("pai-validate-stream")
    script = [ModelReply.call(ScriptedToolCall("call_1", "final_result_Success", RIGHT))]
    model_server.script(f"{key}-plain", script)
    model_server.script(key, script)

    plain_log = InvocationLog(tmp_path / "plain.jsonl")
    plain = sql_gen(Models(model_server, f"{key}-plain"), plain_log)
    async with plain.agent.run_stream(PROMPT, deps=DatabaseConn(plain_log)) as result:
        streamed = [o async for o in result.stream_output(debounce_by=None)]
        plain_output = await result.get_output()

    def streaming(models: Models, log: InvocationLog) -> Built:
        built = sql_gen(models, log)
        return replace(built, flow_args={**built.flow_args, "validate_partial_output": True})

    events, _, _ = await session_stream(
        streaming, model_server, key, PROMPT, temporal_address, tmp_path / "session.jsonl"
    )

    queries = hook_runs(plain_log)
    # The scripted server streams the arguments in two fragments: half a query, then all of it.
    assert len(queries) == 3 and queries[-1] == {"name": "execute", "query": f"EXPLAIN {RIGHT['sql_query']}"}
    assert queries[0]["query"] != queries[-1]["query"], "the first run saw a partial query"
    assert hook_runs(InvocationLog(tmp_path / "session.jsonl")) == queries
    assert plain_output == Success(**RIGHT) and streamed[-1] == plain_output
    published = [e.data["data"] for e in partials(events)]
    assert published[-1] == RIGHT and len(published) == 2


async def test_partial_outputs_of_agent_run_run_no_validator(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """By default the session still publishes the answer's snapshots, parsed by the output
    type alone: the validator (and its query) runs once, on the whole answer."""
    key = unique("pai-validate-run")
    model_server.script(key, [ModelReply.call(ScriptedToolCall("call_1", "final_result_Success", RIGHT))])
    events, _, _ = await session_stream(
        sql_gen, model_server, key, PROMPT, temporal_address, tmp_path / "session.jsonl"
    )
    published = [e.data["data"] for e in partials(events)]
    assert len(published) == 2 and published[0] != RIGHT and published[-1] == RIGHT
    assert hook_runs(InvocationLog(tmp_path / "session.jsonl")) == [
        {"name": "execute", "query": f"EXPLAIN {RIGHT['sql_query']}"}
    ]
    assert not [e for e in events if e.type is AgentEventType.TURN_FAILED]
