"""tools_option.py: ``tools`` as a list, as an empty list, and as the ``claude_code`` preset."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionflow.demo import ModelReply, ScriptedModelServer
from tests.adapter_claude.differential import sdk_examples
from tests.adapter_claude.differential.harness import Builder, Scenario, assert_same_run, run_both

PROMPT = "What tools do you have available? Just list them briefly."


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        pytest.param(sdk_examples.tools_array, ["Glob", "Grep", "Read"], id="array"),
        pytest.param(sdk_examples.tools_empty_array, [], id="empty"),
        pytest.param(
            sdk_examples.tools_preset,
            None,
            id="preset",
            marks=pytest.mark.xfail(
                strict=True,
                reason="the adapter offers the seven Claude Code tools it can run in a tool step, not the preset's ~20",
            ),
        ),
    ],
)
async def test_the_tools_offered(
    build: Builder,
    expected: list[str] | None,
    temporal_address: str,
    model_server: ScriptedModelServer,
    tmp_path: Path,
) -> None:
    scenario = Scenario(
        name=f"tools-{build.__name__}",
        build=build,
        script=[ModelReply.say("I have a few tools.")],
        turns=[PROMPT],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests) == 1
    offered = plain.requests[0]["tools"]
    if expected is None:  # the preset: every default tool of the CLI, more than the adapter runs
        assert {"Agent", "Bash", "Edit", "Read", "WebFetch", "WebSearch", "Write"} <= set(offered)
    else:
        assert offered == expected
    assert plain.results == ["I have a few tools."]
    assert_same_run(plain, session)
