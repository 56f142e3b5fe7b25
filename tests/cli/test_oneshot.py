"""`-p/--prompt` without a terminal: the demo model, a real framework on a scripted server, failures."""

from __future__ import annotations

from sessionflow.demo import ModelReply
from tests.cli.conftest import Cli


def test_demo_on_the_defaults_refuses_then_approves_the_write(cli: Cli) -> None:
    (cli.workspace / "README.md").write_text("Shopping list\nmilk\n")
    # No configuration file and no terminal: the defaults (server auto on the test server's
    # port, which answers as Temporal and is reused), and nothing is written.
    port = {"SESSIONFLOW_SERVER_PORT": str(cli.server_port)}
    refused = cli.run("-p", "show me around", "--model", "demo", extra_env=port)
    assert refused.returncode == 0, refused.stderr
    assert "running on the defaults and writing nothing" in refused.stderr
    assert "Run `sessionflow init` to create one." in refused.stderr
    assert f"Using the Temporal server at 127.0.0.1:{cli.server_port}" in refused.stderr
    assert '[tool] read_file {"path": "README.md"}' in refused.stderr
    assert "refused: pass --approve write_file to approve it" in refused.stderr
    assert 'I read a file that starts with "Shopping list".' in refused.stdout
    assert "You declined the write" in refused.stdout
    assert not (cli.workspace / "sessionflow-demo.md").exists()
    assert not (cli.home / ".sessionflow" / "builtin.yaml").exists()

    approved = cli.run("-p", "show me around", "--model", "demo", "--approve", "write_file", extra_env=port)
    assert approved.returncode == 0, approved.stderr
    assert "You approved the write" in approved.stdout
    assert "README.md starts with: Shopping list" in (cli.workspace / "sessionflow-demo.md").read_text()


def test_builtin_framework_against_a_scripted_model_server(cli: Cli) -> None:
    files_only = "local_tools: {files: true, shell: {enabled: false}, web_fetch: false, browser: false}\n"
    cli.write_config(
        f"model: gpt-test\nsystem_prompt: Answer in one line.\nserver: {cli.server_address}\n{files_only}",
        framework="builtin",
    )
    cli.script([ModelReply.say("The answer is 42.", chunks=["The answer", " is 42."])])
    result = cli.run("-p", "what is six times seven?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "The answer is 42."
    request = cli.requests()[0]
    assert request.model == "gpt-test"
    assert request.saw("Answer in one line.") and request.last_user_text() == "what is six times seven?"
    # ask_user, and the local tools of the one group the file switches on.
    assert set(request.tool_names()) == {
        "ask_user",
        "read_file",
        "list_directory",
        "search_files",
        "write_file",
        "edit_file",
    }


def test_a_framework_that_replaces_a_local_tool_group_does_not_get_it(cli: Cli) -> None:
    groups = "local_tools: {files: true, shell: {enabled: false}, web_fetch: true, browser: false}\n"
    for framework in ("scripted-fs", "scripted"):
        cli.write_config(f"model: scripted\nserver: {cli.server_address}\n{groups}", framework=framework)
    cli.script([ModelReply.say("fine"), ModelReply.say("fine")])
    own = cli.run("-f", "scripted-fs", "-p", "hi")
    assert own.returncode == 0, own.stderr
    # Its own tools do the file work: none of the CLI's file tools, the other groups stay.
    assert set(cli.requests()[0].tool_names()) == {"ask_user", "fetch_web_page", "publish_note", "lookup"}
    plain = cli.run("-f", "scripted", "-p", "hi")
    assert plain.returncode == 0, plain.stderr
    assert {"read_file", "write_file", "fetch_web_page"} <= set(cli.requests()[1].tool_names())


def test_a_failed_turn_exits_with_1(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.fail("http_500", "model down")] * 3)
    result = cli.run("-f", "scripted", "-p", "hello?")
    assert result.returncode == 1, result.stderr
    assert "[turn failed] model call failed" in result.stderr
    assert "model down" in result.stderr
    assert result.stdout == ""
