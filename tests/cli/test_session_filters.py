"""`sessionflow sessions --state/--user/--since`: filters the server answers (search attributes)."""

from __future__ import annotations

import os
import pwd
import time

from sessionflow.demo import ModelReply
from tests.cli.conftest import Cli


def _listed(cli: Cli, *filters: str) -> str:
    listing = cli.run("sessions", "-f", "scripted", *filters)
    assert listing.returncode == 0, listing.stderr
    return listing.stdout


def _until_listed(cli: Cli, session_id: str, *filters: str, present: bool = True) -> None:
    """Visibility is eventually consistent: list again until it agrees (with a hang guard)."""
    deadline = time.monotonic() + 60
    while (session_id in _listed(cli, *filters)) is not present:
        assert time.monotonic() < deadline, (
            f"{filters}: {session_id} never {'appeared' if present else 'left'}"
        )
        time.sleep(0.5)


def test_sessions_filters_by_state_user_and_age(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.say("fine")])
    result = cli.run("-f", "scripted", "-p", "hi")
    assert result.returncode == 0, result.stderr
    rows = [line for line in _listed(cli).splitlines() if line.startswith("│ scripted-")]
    assert len(rows) == 1
    session_id = rows[0].strip("│ ").split()[0]

    _until_listed(cli, session_id, "--since", "1h")
    _until_listed(cli, session_id, "--user", pwd.getpwuid(os.getuid()).pw_name)
    # A one-shot run leaves its session idle, ready to be resumed.
    _until_listed(cli, session_id, "--state", "idle")
    assert session_id not in _listed(cli, "--state", "running")
    assert session_id not in _listed(cli, "--state", "stopped")
    assert session_id not in _listed(cli, "--user", "nobody-else")

    bad = cli.run("sessions", "-f", "scripted", "--since", "soon")
    assert bad.returncode == 2 and "--since" in bad.stderr
