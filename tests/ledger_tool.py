"""A non-idempotent write with a verify, for the adapters' verified-outcome tests: ``pay``.

``pay`` appends a payment, under the call's idempotency key, to a ledger file in the
test's state folder. It can wait at a gate just before its write (``pay-before``) or just
after it (``pay-after``), so a test SIGKILLs the worker with the write not made or made.
Its verify reads the ledger from the line count recorded when the call was deferred (its
``verify_basis``) and answers whether a payment under the write's key is there. Every run
of the handler and of the verify is logged (`InvocationLog`), with its process.

It is declared the way a user declares one: a tool (`sessionflow.builtin.tool`) with a
`ToolSpec.verify` and ``verify_basis``, handed to the adapter as a tool source.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Collection
from pathlib import Path

from sessionflow import ToolEffect, ToolPolicy
from sessionflow.builtin import tool
from sessionflow.kit import NoEffect, TookEffect, ToolInvocation, ToolSpec, VerifyCall, VerifyResult
from sessionflow.testing import FileGate, InvocationLog

__all__ = ["AFTER_WRITE", "BEFORE_WRITE", "LEDGER_FILE", "PAY_POLICY", "ledger_entries", "pay_tool"]

LEDGER_FILE = "ledger.jsonl"
BEFORE_WRITE = "pay-before"
"""The gate ``pay`` waits at before it writes: a kill there leaves the ledger unchanged."""
AFTER_WRITE = "pay-after"
"""The gate ``pay`` waits at after it wrote: a kill there leaves the payment in the ledger."""

PAY_POLICY = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
"""Runs once, and asks nobody (so the test goes straight to the write)."""


def ledger_entries(state_dir: Path) -> list[dict[str, object]]:
    path = state_dir / LEDGER_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def pay_tool(state_dir: Path, gates: Collection[str] = ()) -> ToolSpec:
    """``pay(amount)``, waiting at the given gates (`BEFORE_WRITE`, `AFTER_WRITE`) on its first attempt."""
    log = InvocationLog(state_dir / "invocations.jsonl")
    ledger = state_dir / LEDGER_FILE

    async def pay(amount: int, invocation: ToolInvocation) -> str:
        """Pay an amount."""
        log.record("tool", "pay", key=invocation.idempotency_key, attempt=invocation.attempt, amount=amount)
        first = invocation.attempt == 1
        if first and BEFORE_WRITE in gates:
            await FileGate(state_dir, BEFORE_WRITE).wait_for_release()
        line = json.dumps({"key": invocation.idempotency_key, "amount": amount}) + "\n"
        fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
        if first and AFTER_WRITE in gates:
            await FileGate(state_dir, AFTER_WRITE).wait_for_release()
        return f"paid {amount}"

    def basis(arguments: dict[str, object]) -> str:
        # Taken in the model step, before the write can start: the ledger's length then.
        return str(len(ledger_entries(state_dir)))

    def verify(arguments: dict[str, object], call: VerifyCall) -> VerifyResult:
        log.record("verify", "pay", key=call.idempotency_key, attempt=call.attempt, basis=call.basis)
        since = ledger_entries(state_dir)[int(call.basis or 0) :]
        found = [e for e in since if e["key"] == call.idempotency_key]
        if found:
            return TookEffect(output=f"payment of {found[0]['amount']} found in the ledger")
        return NoEffect(message=f"no payment under {call.idempotency_key} in the ledger")

    return dataclasses.replace(tool(pay, policy=PAY_POLICY), verify=verify, verify_basis=basis)
