"""The command hook the Claude Code CLI runs for PreToolUse and PostToolUse.

Run as ``python -I -S _hook_command.py PLAN``; it imports only the standard library. The
adapter writes PLAN (JSON) before it starts the CLI:

* ``replay_id``, ``pre``, ``post``: the decisions for the call that replays when a
  deferred turn resumes. The CLI settles that call while it boots, before the SDK's own
  hook callbacks are registered, so only a hook from the settings is sure to see it.
* ``fresh``: the decision for every other PreToolUse (defer: nothing runs in the CLI).
* ``ran_log``: a file that records any other call the CLI reports as run (PostToolUse);
  there should never be one, and the adapter fails the step if there is.

It prints the decision as the hook's JSON output, or nothing when it has none.
"""

from __future__ import annotations

import json
import sys
from typing import cast


def main(argv: list[str]) -> int:
    event = _load_object(sys.stdin.read())
    try:
        with open(argv[1], encoding="utf-8") as handle:
            plan = _load_object(handle.read())
    except (IndexError, OSError) as error:
        plan = {"fresh": _deny(f"sessionflow could not read its hook plan ({error}); the call was not run")}
    name = event.get("hook_event_name")
    replay_id = plan.get("replay_id")
    replayed = replay_id is not None and event.get("tool_use_id") == replay_id
    decision: object = None
    if name == "PreToolUse":
        decision = plan.get("pre") if replayed else plan.get("fresh")
    elif name == "PostToolUse" and replayed:
        decision = plan.get("post")
    elif name == "PostToolUse":
        ran_log = plan.get("ran_log")
        if isinstance(ran_log, str):
            record = {"tool_use_id": event.get("tool_use_id"), "tool_name": event.get("tool_name")}
            with open(ran_log, "a", encoding="utf-8") as log:
                log.write(json.dumps(record) + "\n")
    if decision:
        sys.stdout.write(json.dumps(decision))
    return 0


def _load_object(text: str) -> dict[str, object]:
    try:
        value: object = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in cast("dict[object, object]", value).items()}


def _deny(reason: str) -> dict[str, object]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv))
