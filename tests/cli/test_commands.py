"""The command line itself: options before the command, mistyped commands, `--help`,
`--json` listings, and `--config` without its old `-c`. Each runs the command as a process."""

from __future__ import annotations

import json
import re
from typing import Any

from sessionflow.demo import ModelReply
from tests.cli.conftest import Cli, finish

COMMANDS = (
    "chat",
    "init",
    "sessions",
    "connectors",
    "frameworks",
    "server",
    "payloads",
    "codec-server",
    "worker",
    "serve",
)


def test_a_mistyped_command_names_the_right_one(cli: Cli) -> None:
    child = cli.spawn("sesions")
    child.expect_exact("unknown command 'sesions' — did you mean 'sessions'?")
    assert finish(child) == 2
    # Options before it are skipped, with their values.
    typo = cli.run("-f", "scripted", "--config", "x.yaml", "frameworkss")
    assert typo.returncode == 2
    assert "unknown command 'frameworkss' — did you mean 'frameworks'?" in typo.stderr
    assert "did you mean 'connectors'?" in cli.run("conectors").stderr


def test_a_word_is_never_sent_as_a_message(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.say("should never be asked")])
    word = cli.run("-f", "scripted", "hello")
    assert word.returncode == 2
    assert "unknown command 'hello' (commands: chat, init, sessions," in word.stderr
    assert "to send it as a message: sessionflow -p hello" in word.stderr
    message = cli.run("-f", "scripted", "hello there, agent")
    assert message.returncode == 2
    assert "a message goes after -p: sessionflow -p 'hello there, agent'" in message.stderr
    assert cli.requests() == []
    # After -p, any word is the message, a command's name too.
    sent = cli.run("-f", "scripted", "-p", "sessions")
    assert sent.returncode == 0, sent.stderr
    assert cli.requests()[0].last_user_text() == "sessions"


def test_options_before_the_command_apply_to_it(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.say("fine")])
    chat = cli.run("-f", "scripted", "-p", "hi", "--output-format", "json")
    assert chat.returncode == 0, chat.stderr
    session_id = json.loads(chat.stdout)["session_id"]

    listing = cli.run("-f", "scripted", "sessions", "--json")
    assert listing.returncode == 0, listing.stderr
    document = json.loads(listing.stdout)
    assert document["flow_type"].startswith("sessionflow-scripted-")
    assert document["server"] == cli.server_address
    (row,) = document["sessions"]
    assert row["session_id"] == session_id
    assert row["status"] == "idle" and row["open"] is True and row["turns"] == 1
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00", row["last_activity"])

    # The same options after the command, and another framework's sessions (none).
    after = cli.run("sessions", "-f", "scripted", "--json")
    assert json.loads(after.stdout)["sessions"] == document["sessions"]
    cli.write_config(framework="scripted-text")
    other = cli.run("--framework=scripted-text", "sessions", "--json")
    assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout)["sessions"] == []


def test_config_has_only_its_long_form(cli: Cli) -> None:
    path = cli.write_config()
    custom = path.with_name("custom.yaml")
    custom.write_text(path.read_text() + "connectors:\n  - name: nowhere\n    url: http://127.0.0.1:9/mcp\n")
    short = cli.run("connectors", "-f", "scripted", "-c", str(custom))
    assert short.returncode == 2 and "unrecognized arguments" in short.stderr
    long = cli.run("--config", str(custom), "-f", "scripted", "connectors", "--json")
    assert long.returncode == 0, long.stderr
    document: dict[str, Any] = json.loads(long.stdout)
    assert document["config"] == str(custom.resolve())
    (connector,) = document["connectors"]
    assert connector["name"] == "nowhere" and connector["answered"] is False and connector["tools"] == []
    assert connector["error"] and document["answered"] == 0 and document["missing_required"] == []


def test_connectors_json_without_connectors_and_with_a_required_one_down(cli: Cli) -> None:
    cli.write_config()
    empty = cli.run("connectors", "-f", "scripted", "--json")
    assert empty.returncode == 0, empty.stderr
    assert json.loads(empty.stdout)["connectors"] == []
    path = cli.config_path()
    path.write_text(
        path.read_text()
        + "connectors:\n  - name: needed\n    url: http://127.0.0.1:9/mcp\n    required: true\n"
    )
    down = cli.run("connectors", "-f", "scripted", "--json")
    assert down.returncode == 1
    assert json.loads(down.stdout)["missing_required"] == ["needed"]


def test_frameworks_json(cli: Cli) -> None:
    result = cli.run("frameworks", "--json")
    assert result.returncode == 0, result.stderr
    listed: list[dict[str, Any]] = json.loads(result.stdout)
    by_name = {entry["name"]: entry for entry in listed}
    assert [entry["name"] for entry in listed] == sorted(by_name)
    assert {"builtin", "scripted", "scripted-text", "scripted-fs"} <= set(by_name)
    text = by_name["scripted-text"]
    assert text["description"] == "The built-in runner with test tools (images: False)"
    assert text["model_api"] == "chat_completions" and text["plugin"] == "tests.cli.scripted_plugin"
    assert text["capabilities"]["images"] is False and text["capabilities"]["parallel_tool_calls"] is True
    assert by_name["builtin"]["capabilities"]["tool_state"] is True


def test_help_lists_each_command_once_and_each_command_has_examples(cli: Cli) -> None:
    top = cli.run("--help")
    assert top.returncode == 0
    for name in COMMANDS:
        listed = [line for line in top.stdout.splitlines() if line.split()[:1] == [name]]
        assert len(listed) == 1, (name, top.stdout)
    assert "130 interrupted" in top.stdout
    for name in COMMANDS:
        page = cli.run(name, "--help")
        assert page.returncode == 0, page.stderr
        assert page.stdout.startswith(f"usage: sessionflow {name} "), page.stdout
        description = page.stdout.split("\n\n")[1]  # one line, after the usage
        assert "\n" not in description.strip() and description.endswith("."), description
        examples = page.stdout.split("examples:\n", 1)[1].splitlines()
        shown = [line for line in examples if re.match(r"  ([^|]+\| )?sessionflow ", line)]
        assert 2 <= len(shown) <= 3 and len(shown) == len([line for line in examples if line]), (
            name,
            examples,
        )
    chat = cli.run("chat", "--help").stdout
    assert "-c, --continue" in chat and "--config FILE" in chat and "-c FILE" not in chat
    assert "--output-format {text,json,stream-json}" in chat


def test_sessions_json_when_no_server_answers(cli: Cli) -> None:
    # No file: `server: auto` on this module's private port, where nothing answers.
    result = cli.run("sessions", "-f", "scripted", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["sessions"] == [] and document["flow_type"].startswith("sessionflow-scripted-")
    assert "No Temporal server answers on 127.0.0.1:" in result.stderr
