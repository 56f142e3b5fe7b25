"""Rows of the extension-point matrix for the fields of ``ClaudeAgentOptions`` that no SDK
example covers, each against the plain SDK on the same scripted server: pass-through
options (request parameters, the SDK client's transport), options the adapter refuses
(with plain's real behaviour asserted), strict MCP config and skills."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage, UserMessage

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import extension_points, sdk_examples
from tests.adapter_claude.differential.harness import (
    Run,
    RunFolders,
    Scenario,
    assert_same_run,
    run_both,
    scripted,
    session_flow,
    tool_results,
    unique,
)


def _refused(session: Run, option: str) -> str:
    """The session's one problem: the flow was refused when built, naming `option`."""
    assert len(session.problems) == 1, session.problems
    refusal = session.problems[0]
    assert "UnsupportedOptionError" in refusal and f"option {option!r}" in refusal, refusal
    assert session.requests == [] and session.tool_runs == []
    return refusal


async def test_strict_mcp_config_leaves_the_projects_servers_out(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The project's settings enable its ``.mcp.json``; ``strict_mcp_config`` makes Claude Code
    load none of it, so the session runs (without the option it is refused: row 28)."""
    scenario = Scenario(
        name="strict-mcp",
        build=extension_points.strict_mcp_config,
        files=extension_points.MCP_JSON_FILES,
        script=[ModelReply.say("Hi.")],
        turns=["Say hello"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[0]["tools"] == ["Read"]
    assert plain.results == ["Hi."]
    assert_same_run(plain, session)


async def test_request_parameters_reach_the_model_as_in_plain(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``fallback_model``, ``betas``, ``thinking``, ``effort``, ``task_budget`` and
    ``client_app``: every request parameter and header they set is plain's."""
    scenario = Scenario(
        name="request-options",
        build=extension_points.request_options,
        script=[ModelReply.say("Hi.", reasoning="A greeting.")],
        turns=["Say hello"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    (parameters,) = plain.parameters
    assert parameters["output_config"] == {
        "effort": "high",
        "task_budget": {"total": 50_000, "type": "tokens"},
    }
    assert "thinking" in parameters
    assert "context-1m-2025-08-07" in str(parameters["headers"]["anthropic-beta"]).split(",")
    assert parameters["headers"]["x-client-app"] == "sessionflow-tests/1.0"
    assert session.parameters == plain.parameters
    assert_same_run(plain, session)


async def test_max_thinking_tokens_and_extra_args_reach_the_model_as_in_plain(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``max_thinking_tokens`` and a CLI flag in ``extra_args`` (``--append-system-prompt``)."""
    scenario = Scenario(
        name="request-flags",
        build=extension_points.request_options_by_flag,
        script=[ModelReply.say("Hi.")],
        turns=["Say hello"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert extension_points.APPENDED in plain.requests[0]["system"]
    # The CLI turns the budget into the thinking it sends a model it does not know.
    assert plain.parameters[0]["thinking"]["type"] == "adaptive"
    assert session.parameters == plain.parameters
    assert_same_run(plain, session)


async def test_the_sdk_clients_transport_options_hold_in_every_step(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``stderr`` (with the CLI's debug output on stderr), ``max_buffer_size`` and
    ``load_timeout_ms``: the callback reads the CLI's lines in the session's model step as it
    reads plain's."""
    scenario = Scenario(
        name="transport",
        build=extension_points.transport_options,
        script=[
            ModelReply.call(ScriptedToolCall("toolu_read", "Read", {"file_path": "a.txt"})),
            ModelReply.say("A."),
        ],
        files={"a.txt": "a\n"},
        turns=["Read a.txt"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    def lines(run: str) -> list[str]:
        path = tmp_path / run / "stderr.txt"
        return path.read_text().splitlines() if path.exists() else []

    # Claude Code's debug lines, from the CLI of each run: plain's one process, the
    # session's two model steps.
    assert any("[DEBUG]" in line for line in lines("plain"))
    assert any("[DEBUG]" in line for line in lines("session"))
    assert_same_run(plain, session)


async def test_client_stream_options_leave_the_requests_as_in_plain(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``include_hook_events`` and ``forward_subagent_text`` change what the SDK client is sent
    (documented: a session's client follows the session's events); the hooks and what the
    model is sent are plain's."""
    scenario = Scenario(
        name="client-stream",
        build=extension_points.client_stream_options,
        script=[ModelReply.say("Hi.")],
        turns=["Say hello"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert [h["name"] for h in plain.hooks] == ["UserPromptSubmit"]
    assert_same_run(plain, session)


async def test_added_directories_are_refused_when_the_flow_is_built(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Plain reads a file of an ``add_dirs`` folder; the session's file tools open nothing
    outside ``cwd``, so the option is refused."""
    for run in ("plain", "session"):
        (tmp_path / run / "shared").mkdir(parents=True)
        (tmp_path / run / "shared" / "notes.txt").write_text("shared notes\n")
    scenario = Scenario(
        name="add-dirs",
        build=extension_points.added_directory,
        script=lambda workspace: [
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_read", "Read", {"file_path": str(workspace.parent / "shared" / "notes.txt")}
                )
            ),
            ModelReply.say("Read."),
        ],
        turns=["Read the shared notes"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    text, is_error = tool_results(plain.requests[1])["toolu_read"]
    assert not is_error and "shared notes" in text
    assert "open nothing outside cwd" in _refused(session, "add_dirs")


async def test_structured_output_is_refused_when_the_flow_is_built(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Plain: the model calls Claude Code's StructuredOutput tool, which ends the turn inside
    the CLI with the JSON as its result, after one request."""
    scenario = Scenario(
        name="output-format",
        build=extension_points.structured_output,
        script=[
            ModelReply.call(ScriptedToolCall("toolu_out", "StructuredOutput", {"answer": "hi"})),
            ModelReply.say("spare"),
        ],
        turns=["Answer hi"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 1
    assert plain.results == ['{"answer":"hi"}'] and plain.subtypes == ["success"]
    assert "StructuredOutput" in _refused(session, "output_format")


async def test_a_projects_skill_is_offered_by_neither_run_without_the_skill_tool(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``.claude/skills/haiku/SKILL.md`` with ``setting_sources=["project"]`` and a tool list
    without ``Skill``: the requests are plain's, and neither names the skill."""
    scenario = Scenario(
        name="project-skill",
        build=extension_points.project_skill,
        files=extension_points.SKILL_FILES,
        script=[ModelReply.say("Hi.")],
        turns=["Say hello"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert "haiku" not in str(plain.requests[0])
    assert_same_run(plain, session)


async def test_skills_are_refused_when_the_flow_is_built(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Plain with ``skills="all"``: the model calls ``Skill``, and Claude Code loads the
    SKILL.md into the conversation inside the CLI; the session refuses the option."""
    scenario = Scenario(
        name="skills",
        build=extension_points.all_skills,
        files=extension_points.SKILL_FILES,
        script=[
            ModelReply.call(ScriptedToolCall("toolu_skill", "Skill", {"skill": "haiku"})),
            ModelReply.say("Hi."),
        ],
        turns=["Say hello with the haiku skill"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert "Skill" in plain.requests[0]["tools"]
    assert "Write the answer as a haiku of three lines." in str(plain.requests[1]["messages"])
    assert "Skill tool" in _refused(session, "skills")


async def test_file_checkpointing_is_refused_when_the_flow_is_built(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """Plain with ``enable_file_checkpointing``: Claude Code's Write changes a file and
    ``rewind_files`` puts it back. Under sessionflow the tool step writes the file, so there
    is no checkpoint; the option is refused."""
    key = unique("claude-checkpoint")
    folders = RunFolders(tmp_path / "plain")
    folders.prepare({"notes.txt": "before\n"})
    model_server.script(
        f"{key}-plain",
        [
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_write",
                    "Write",
                    {"file_path": str(folders.workspace / "notes.txt"), "content": "after\n"},
                )
            ),
            ModelReply.say("Written."),
        ],
    )
    options = ClaudeAgentOptions(
        cwd=str(folders.workspace),
        tools=["Read", "Write"],
        permission_mode="acceptEdits",
        enable_file_checkpointing=True,
        extra_args={"replay-user-messages": None},
    )
    plain = scripted(options, model_server.base_url(f"{key}-plain", api="anthropic"), folders, plain=True)
    checkpoint: str | None = None
    result: ResultMessage | None = None
    async with ClaudeSDKClient(plain) as client:
        await client.query("Write 'after' into notes.txt")
        async for message in client.receive_response():
            if isinstance(message, UserMessage) and message.uuid and checkpoint is None:
                checkpoint = message.uuid
            if isinstance(message, ResultMessage):
                result = message
        assert result is not None and result.result == "Written."
        assert (folders.workspace / "notes.txt").read_text() == "after\n"
        assert checkpoint is not None
        await client.rewind_files(checkpoint)
    assert (folders.workspace / "notes.txt").read_text() == "before\n"

    session_folders = RunFolders(tmp_path / "session")
    session_folders.prepare({})
    session_options = scripted(
        replace(options, cwd=str(session_folders.workspace)),
        model_server.base_url(f"{key}-session", api="anthropic"),
        session_folders,
        plain=False,
    )
    try:
        session_flow(session_options, key, session_folders)
    except Exception as error:  # the refusal is what the test reads
        refusal = f"{type(error).__name__}: {error}"
    else:
        refusal = ""
    assert refusal.startswith("UnsupportedOptionError: option 'enable_file_checkpointing'")
    assert "rewind_files" in refusal and model_server.requests(f"{key}-session") == []


async def test_a_file_outside_cwd_is_read_by_plain_only(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``cwd`` (documented): Claude Code's ``Read`` reaches a file outside the working folder
    (after asking); sessionflow's file tools open nothing outside ``cwd``, and the model reads
    why."""
    for run in ("plain", "session"):
        (tmp_path / run).mkdir(parents=True)
        (tmp_path / run / "outside.txt").write_text("outside words\n")
    scenario = Scenario(
        name="outside-cwd",
        build=sdk_examples.reader,
        script=lambda workspace: [
            ModelReply.call(
                ScriptedToolCall("toolu_read", "Read", {"file_path": str(workspace.parent / "outside.txt")})
            ),
            ModelReply.say("Done."),
        ],
        turns=["Read ../outside.txt"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    text, is_error = tool_results(plain.requests[1])["toolu_read"]
    assert not is_error and "outside words" in text
    text, is_error = tool_results(session.requests[1])["toolu_read"]
    assert is_error and "outside words" not in text
    assert plain.results == session.results == ["Done."]
