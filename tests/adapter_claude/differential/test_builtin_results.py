"""Claude Code's ``Read``, ``Write`` and ``Bash``: their results reach the model as plain tool
results (no error flag), and ``Write`` and ``Bash`` ask first in both runs (plain through
``can_use_tool``, the session through a person)."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import sdk_examples
from tests.adapter_claude.differential.harness import Run, Scenario, assert_same_run, run_both, tool_results


def results_of_last_request(run: Run) -> dict[str, tuple[str, bool]]:
    return tool_results(run.requests[-1])


async def test_read_write_and_bash_results(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="builtin",
        build=sdk_examples.file_assistant_asking,
        files={"notes.txt": "buy milk\n"},
        script=lambda workspace: [
            ModelReply.call(
                ScriptedToolCall("toolu_read", "Read", {"file_path": str(workspace / "notes.txt")})
            ),
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_write",
                    "Write",
                    {"file_path": str(workspace / "copy.txt"), "content": "buy milk\nbuy bread\n"},
                )
            ),
            ModelReply.call(
                ScriptedToolCall(
                    "toolu_bash",
                    "Bash",
                    {"command": "echo 'buy eggs' >> copy.txt && wc -l < copy.txt", "description": "Add eggs"},
                )
            ),
            ModelReply.say("copy.txt has 3 lines."),
        ],
        turns=["Copy my notes to copy.txt, add bread, and count the lines."],
        approvals=[True, True],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 4
    assert [name for name, _ in plain.asked] == ["Write", "Bash"]
    results = results_of_last_request(plain)
    assert "buy milk" in results["toolu_read"][0]
    assert "<workspace>/copy.txt" in results["toolu_write"][0]
    assert results["toolu_bash"][0] == "3"
    assert not any(is_error for _, is_error in results.values())
    assert plain.files == {"notes.txt": "buy milk\n", "copy.txt": "buy milk\nbuy bread\nbuy eggs\n"}
    assert plain.results == ["copy.txt has 3 lines."]
    assert_same_run(plain, session)
    flagged = {k for k, (_, is_error) in results_of_last_request(session).items() if is_error}
    assert not flagged, f"the session sent {sorted(flagged)} as error results"
