"""The session checks every proposal in CLI sessions too: the command's runner forwards the catalog.

`builtin` and `langgraph` offer a tool catalog; the command wraps their runner in its own
(which resolves each turn first), and the checks must still run: a tool the turn does
not offer is `not_allowed`, arguments that fail the schema are `invalid_arguments`, and
neither call runs or waits for approval.
"""

from __future__ import annotations

import pytest

from sessionflow.demo import ModelReply, ScriptedToolCall
from tests.cli.conftest import Cli

FILES_ONLY = "local_tools: {files: true, shell: {enabled: false}, web_fetch: false, browser: false}\n"


@pytest.mark.parametrize("framework", ["builtin", "langgraph"])
def test_proposals_are_checked_against_the_catalog(cli: Cli, framework: str) -> None:
    cli.write_config(f"model: gpt-test\nserver: {cli.server_address}\n{FILES_ONLY}", framework=framework)
    cli.script(
        [
            ModelReply.call(
                ScriptedToolCall(id="c1", name="delete_everything", arguments={}),
                # read_file needs a `path`.
                ScriptedToolCall(id="c2", name="read_file", arguments={"file": "README.md"}),
            ),
            ModelReply.say("Both calls were refused."),
        ]
    )
    # The real adapter through its entry point; builtin is part of the core.
    env = {"SESSIONFLOW_LOAD_PLUGINS": framework} if framework != "builtin" else {}

    result = cli.run("-f", framework, "-p", "clean up", extra_env=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Both calls were refused."
    results = cli.requests()[1].tool_results()
    assert "not_allowed" in results["c1"] and "delete_everything" in results["c1"]
    assert "invalid_arguments" in results["c2"] and "path" in results["c2"]
    # A refused proposal never asks: an unclassified tool would otherwise wait for approval.
    assert "[approval]" not in result.stderr
