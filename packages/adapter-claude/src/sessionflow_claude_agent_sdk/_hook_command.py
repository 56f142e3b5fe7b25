"""The command hook the Claude Code CLI runs for PreToolUse and PostToolUse.

Run as ``python -I -S _hook_command.py PLAN``; it imports only the standard library. The
adapter writes PLAN (JSON) before it starts the CLI:

* ``fresh``: the decision for every new PreToolUse (defer: nothing runs in the CLI).
* ``answered`` and ``answered_ids``: the decision for a call whose result the transcript
  already holds. A resumed CLI asks again about the last call it deferred before it goes on;
  denied, it keeps the result sessionflow wrote, runs nothing and continues the turn
  (allowed, it would run the call again; deferred again, it would stop).
* ``ran_log``: a file that records any call the CLI reports as run (PostToolUse); there
  should never be one, and the adapter fails the step if there is.

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
    decision: object = None
    answered = plan.get("answered_ids")
    if name == "PreToolUse" and isinstance(answered, list) and event.get("tool_use_id") in answered:
        decision = plan.get("answered")
    elif name == "PreToolUse":
        decision = plan.get("fresh")
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
