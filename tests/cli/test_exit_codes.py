"""Exit codes: 0 success, 1 failure at run time, 2 usage or configuration error."""

from __future__ import annotations

from tests.cli.conftest import Cli


def test_usage_errors_exit_with_2(cli: Cli) -> None:
    unknown_option = cli.run("--no-such-option")
    assert unknown_option.returncode == 2
    unknown_framework = cli.run("-f", "no-such-framework", "-p", "hi")
    assert unknown_framework.returncode == 2
    assert "unknown framework 'no-such-framework'" in unknown_framework.stderr
    assert "scripted" in unknown_framework.stderr
    no_terminal = cli.run("chat", "-f", "scripted")
    assert no_terminal.returncode == 2 and "pass -p/--prompt" in no_terminal.stderr


def test_a_rejected_file_exits_with_2_and_names_the_place(cli: Cli) -> None:
    path = cli.write_config("model: x\nlocal_tools:\n  shell:\n    allow: ls\n")
    result = cli.run("-f", "scripted", "-p", "hi")
    assert result.returncode == 2
    assert f'{path}: schema at "/local_tools/shell/allow" (schema keyword type)' in result.stderr
    cli.write_config("server: {address: auto, pasword: x}\n")
    typo = cli.run("-f", "scripted", "-p", "hi")
    assert typo.returncode == 2 and 'schema at "/server" (schema keyword additionalProperties)' in typo.stderr


def test_listing_frameworks_exits_with_0(cli: Cli) -> None:
    result = cli.run("frameworks")
    assert result.returncode == 0, result.stderr
    assert "builtin  Framework-free runner" in result.stdout
    assert "scripted-text  The built-in runner with test tools (images: False)" in result.stdout
    assert "model API chat_completions; images no;" in result.stdout
    builtin = next(line for line in result.stdout.splitlines() if "plugin sessionflow.builtin" in line)
    assert "tool state yes" in builtin
