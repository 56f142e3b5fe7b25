"""The README's runnable example runs as written, against the scripted model server."""

from __future__ import annotations

from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.examples import own_temporal, readme_example, run_example


async def test_the_readme_example_runs(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(readme_example("adapter-claude"))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "todo.txt").write_text("buy milk\n")
    command = "echo 'buy bread' >> todo.txt && wc -l < todo.txt"
    async with own_temporal(tmp_path / "temporal") as temporal_address:
        with ScriptedModelServer() as model:
            model.script(
                "todo",
                [
                    ModelReply.call(
                        ScriptedToolCall("call-1", "Read", {"file_path": str(workspace / "todo.txt")})
                    ),
                    ModelReply.call(ScriptedToolCall("call-2", "Bash", {"command": command})),
                    ModelReply.say("Added bread; the list has 2 items."),
                ],
            )
            env = {
                "TEMPORAL_ADDRESS": temporal_address,
                "ANTHROPIC_BASE_URL": model.base_url("todo", api="anthropic"),
                "ANTHROPIC_API_KEY": "unused",
            }
            text = await run_example(script, env, cwd=workspace)
            requests = model.requests("todo")
    assert text.rstrip().endswith("Added bread; the list has 2 items."), text
    # The command ran once, in its tool step, after the approval; the model saw both results.
    assert (workspace / "todo.txt").read_text() == "buy milk\nbuy bread\n"
    seen = requests[-1].tool_results()
    assert "buy milk" in seen["call-1"] and seen["call-2"].strip() == "2", seen
