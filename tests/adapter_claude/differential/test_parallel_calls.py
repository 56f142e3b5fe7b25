"""One model response with two ``Read`` calls: plain runs both and sends both results at once."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_claude.differential import sdk_examples
from tests.adapter_claude.differential.harness import Scenario, assert_same_run, run_both, tool_results


async def test_two_reads_in_one_response(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="parallel",
        build=sdk_examples.reader,
        files={"a.txt": "alpha\n", "b.txt": "beta\n"},
        script=lambda workspace: [
            ModelReply.call(
                ScriptedToolCall("toolu_a", "Read", {"file_path": str(workspace / "a.txt")}),
                ScriptedToolCall("toolu_b", "Read", {"file_path": str(workspace / "b.txt")}),
            ),
            ModelReply.say("a.txt says alpha, b.txt says beta."),
        ],
        turns=["Read a.txt and b.txt"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 2
    results = tool_results(plain.requests[1])
    assert set(results) == {"toolu_a", "toolu_b"}
    assert "alpha" in results["toolu_a"][0] and not results["toolu_a"][1]
    assert "beta" in results["toolu_b"][0] and not results["toolu_b"][1]
    assert plain.results == ["a.txt says alpha, b.txt says beta."]
    assert_same_run(plain, session)
