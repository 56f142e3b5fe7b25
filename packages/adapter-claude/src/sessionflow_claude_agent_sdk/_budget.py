"""``max_budget_usd`` across steps: the session's spending, as one CLI process would count it.

Claude Code counts the cost of every model request its process made and, once that reaches
``max_budget_usd``, ends the turn as ``error_max_budget_usd``: right after the response that
reached it (the calls of that response still run), and at once, without a request, on every
later turn of the same client. It also shows the model where it stands ("USD budget:
$used/$total; $remaining remaining") with the turn's prompt and after tool results.

Under sessionflow every model request is its own CLI process, so the adapter keeps the count
(the run state within a turn, the turn's last stored message across turns) and decides
itself. The CLI gets `CLI_BUDGET` instead of the user's budget, so that it never ends a
step on its own (a step ends only where the adapter can keep the session going) but still
writes its reminders where it would; those are then rewritten with the session's numbers:
the relay rewrites the request the model gets (`rewrite_budget_texts`), and the transcript
keeps the same numbers (`with_session_budget`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, cast

__all__ = [
    "CLI_BUDGET",
    "budget_error",
    "budget_spent",
    "js_number",
    "rewrite_budget_texts",
    "with_session_budget",
]

CLI_BUDGET = float(2**40)
"""The ``max_budget_usd`` each CLI run gets when the user set one: never reached by one
step, and an integer, so the reminders it writes are easy to find."""

_REMINDER = re.compile(
    r"USD budget: \$(?P<used>[-0-9.e+]+)/\$(?P<total>[-0-9.e+]+); \$(?P<left>[-0-9.e+]+) remaining"
)

Json = dict[str, Any]


def js_number(value: float) -> str:
    """``value`` as JavaScript's ``String(number)`` writes it (the CLI is JavaScript)."""
    if value != value:  # NaN
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)  # the shortest text that reads back as `value`, as JavaScript picks
    exponent = abs(value) < 1e-6 or abs(value) >= 1e21
    if not exponent:
        return format(Decimal(text), "f")
    mantissa, _, power = format(Decimal(text), "e").partition("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    sign = "-" if power.startswith("-") else "+"
    return f"{mantissa}e{sign}{power.lstrip('+-').lstrip('0') or '0'}"


def budget_spent(spent: float, budget: float | None) -> bool:
    """Claude Code's test: the budget is spent once the cost reaches it."""
    return budget is not None and not spent < budget


def budget_error(budget: float) -> str:
    return f"Reached maximum budget (${js_number(budget)})"


def _reminder(used: float, total: float) -> str:
    return f"USD budget: ${js_number(used)}/${js_number(total)}; ${js_number(total - used)} remaining"


def rewrite_budget_texts(request: Json, spent_before: float, budget: float) -> bool:
    """Every reminder the CLI wrote with `CLI_BUDGET` in `request`, with the session's numbers.

    The CLI counts only what its own step spent; the session had spent `spent_before` when
    the step started. Returns whether anything changed.
    """
    changed = False
    for message in cast(list[Any], request.get("messages") or []):
        if not isinstance(message, dict):
            continue
        body = cast(Json, message)
        content = body.get("content")
        if isinstance(content, str):
            new = _rewrite(content, spent_before, budget)
            if new != content:
                body["content"] = new
                changed = True
            continue
        for block in cast(list[Any], content or []):
            if isinstance(block, dict) and isinstance(cast(Json, block).get("text"), str):
                text = str(cast(Json, block)["text"])
                new = _rewrite(text, spent_before, budget)
                if new != text:
                    cast(Json, block)["text"] = new
                    changed = True
    return changed


def _rewrite(text: str, spent_before: float, budget: float) -> str:
    if "USD budget: $" not in text:
        return text

    def one(match: re.Match[str]) -> str:
        if float(match.group("total")) != CLI_BUDGET:
            return match.group(0)
        return _reminder(spent_before + float(match.group("used")), budget)

    return _REMINDER.sub(one, text)


def with_session_budget(lines: Sequence[str], start: int, spent_before: float, budget: float) -> list[str]:
    """`lines` whose ``budget_usd`` attachments from `start` on carry the session's numbers."""
    out = list(lines[:start])
    for line in lines[start:]:
        if '"budget_usd"' in line:
            try:
                parsed: object = json.loads(line)
            except ValueError:
                parsed = None
            entry = cast(Json, parsed) if isinstance(parsed, dict) else {}
            attachment = entry.get("attachment")
            if isinstance(attachment, dict) and cast(Json, attachment).get("type") == "budget_usd":
                found = cast(Json, attachment)
                if found.get("total") == CLI_BUDGET:
                    used = spent_before + float(found.get("used") or 0)
                    found.update(used=used, total=budget, remaining=budget - used)
                    # The text the CLI rendered, which a later step shows as it stands.
                    entry["rendered"] = _with_text(entry.get("rendered"), _reminder(used, budget))
                    line = json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
        out.append(line)
    return out


def _with_text(value: Any, reminder: str) -> Any:
    """`value` with each reminder the CLI wrote with `CLI_BUDGET` replaced by `reminder`."""
    if isinstance(value, str):
        return _REMINDER.sub(
            lambda m: reminder if float(m.group("total")) == CLI_BUDGET else m.group(0), value
        )
    if isinstance(value, list):
        return [_with_text(v, reminder) for v in cast(list[Any], value)]
    if isinstance(value, dict):
        return {k: _with_text(v, reminder) for k, v in cast(Json, value).items()}
    return value
