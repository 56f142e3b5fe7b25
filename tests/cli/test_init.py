"""`init` at a terminal, `--yes`, `--print-schema`, and commands without a file or a terminal."""

from __future__ import annotations

import json

from sessionflow_cli.config import config_schema, default_text, parse_config
from tests.cli.conftest import Cli, finish


def test_init_asks_at_a_terminal_and_keeps_comments(cli: Cli) -> None:
    child = cli.spawn("init", "-f", "scripted")
    answers = [
        ("Model", "my-model"),
        ("Workspace folder", ""),
        ("Temporal server", cli.server_address),
        ("shell commands", "n"),
        ("run without approval", "make test, git status"),
        ("fetch web pages", ""),
        ("headless browser", "y"),
    ]
    for question, answer in answers:
        child.expect_exact(question)
        child.sendline(answer)
    child.expect_exact(f"Wrote {cli.config_path()}")
    assert finish(child) == 0
    text = cli.config_path().read_text()
    assert "# The model, as the framework names it." in text
    assert "model: my-model" in text and f"server: {cli.server_address}" in text
    assert "scripted: {}" in text

    # Answering again keeps the person's own comments and every unasked key.
    changed = text.replace("model: my-model", "# my own note\nmodel: my-model").replace(
        "models: []", "models: [x]"
    )
    cli.config_path().write_text(changed)
    again = cli.spawn("init", "-f", "scripted")
    for question, _ in answers:
        again.expect_exact(question)
        again.sendline("")
    assert finish(again) == 0
    kept = cli.config_path().read_text()
    assert "# my own note\nmodel: my-model" in kept and "models: [x]" in kept
    config = parse_config("scripted", kept, path=cli.config_path(), cwd=cli.workspace)
    assert config.local_tools.shell.allow == ("make test", "git status")
    assert config.local_tools.browser and not config.local_tools.shell.enabled
    assert config.models == ("x",) and config.server.address == cli.server_address


def test_chat_at_a_terminal_without_a_file_asks_first(cli: Cli) -> None:
    child = cli.spawn("chat", "-f", "scripted")
    child.expect_exact("a few questions create it")
    for question, answer in [
        ("Model", "scripted"),
        ("Workspace", ""),
        ("Temporal server", cli.server_address),
    ]:
        child.expect_exact(question)
        child.sendline(answer)
    for _ in range(4):
        child.expect(r"\]: ")
        child.sendline("n")
    child.expect_exact(f"Wrote {cli.config_path()}")
    child.expect("you> ")
    child.sendline("/exit")
    assert finish(child) == 0
    assert "web_fetch: false" in cli.config_path().read_text()


def test_yes_writes_the_defaults_and_print_schema(cli: Cli) -> None:
    written = cli.run("init", "--yes")
    assert written.returncode == 0, written.stderr
    assert cli.config_path("builtin").read_text() == default_text("builtin")
    schema = cli.run("init", "--print-schema")
    assert schema.returncode == 0
    # The test plugin's frameworks are sections too (test_config_schema.py checks them).
    printed = json.loads(schema.stdout)
    assert printed == config_schema([*printed["properties"]])


def test_chat_yes_writes_the_defaults_and_runs_on_them(cli: Cli) -> None:
    port = {"SESSIONFLOW_SERVER_PORT": str(cli.server_port)}
    result = cli.run("-f", "scripted", "--yes", "-p", "hello", extra_env=port)
    assert result.returncode == 0, result.stderr
    assert f"Wrote the default configuration to {cli.config_path()}." in result.stderr
    assert cli.config_path().read_text() == default_text("scripted")
    assert "That was the offline demo" in result.stdout  # the default model is the demo


def test_init_without_a_terminal_is_a_usage_error(cli: Cli) -> None:
    result = cli.run("init")
    assert result.returncode == 2
    assert "pass --yes" in result.stderr
    assert not cli.config_path("builtin").exists()
