"""The verify step: ask the runner whether a write whose step died took effect.

`VerifyStepActivities.verify_tool` runs it as ``sessionflow.VerifyTool``, a read step (retried
like one) with the write's own input, so the runner sees the same record and idempotency
key the write had. A long answer is stored like a tool output.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from temporalio import activity
from temporalio.exceptions import ApplicationError

from sessionflow.session.bodies import BodyRef, preview_text
from sessionflow.session.runner import AgentFrameworkRunner, DeferredToolExecution
from sessionflow.session.tools import ToolExecutionError
from sessionflow.session.verify import EffectUnknown, NoEffect, TookEffect
from sessionflow.temporal._payloads import VERIFY_TOOL, ToolCallInput, VerifyToolOutput
from sessionflow.temporal.activities._step_context import (
    StepActivities,
    store_scope,
    with_heartbeats,
)

__all__ = ["VerifyStepActivities", "verify_write"]

NO_VERIFY = "the runner has no verify for this tool"


async def verify_write(
    runner: AgentFrameworkRunner,
    execution: DeferredToolExecution,
    store: Callable[[str], Awaitable[BodyRef | None]] | None,
) -> VerifyToolOutput:
    """The runner's answer as the step's output; ``store`` keeps a long output by reference.

    A `ToolExecutionError` from the verify is its way of saying it cannot tell: the
    answer is ``unknown`` with its message, and the step is not retried.
    """
    try:
        result = await runner.verify_tool_call(execution)
    except ToolExecutionError as error:
        return VerifyToolOutput(answer="unknown", message=error.message)
    if isinstance(result, TookEffect):
        ref = await store(result.output) if store is not None else None
        if ref is not None:
            return VerifyToolOutput(answer="succeeded", output=preview_text(result.output), output_ref=ref)
        return VerifyToolOutput(answer="succeeded", output=result.output)
    if isinstance(result, NoEffect):
        return VerifyToolOutput(answer="failed", message=result.message)
    if isinstance(result, EffectUnknown):
        return VerifyToolOutput(answer="unknown", message=result.reason)
    if result is not None:
        raise ApplicationError(
            f"verify_tool_call returned {type(result).__name__}, expected TookEffect, NoEffect, "
            "EffectUnknown or None",
            type="InvalidOutcomeError",
            non_retryable=True,
        )
    return VerifyToolOutput(answer="unknown", message=NO_VERIFY)


class VerifyStepActivities(StepActivities):
    """VerifyTool for one flow on one worker."""

    @activity.defn(name=VERIFY_TOOL)
    async def verify_tool(self, request: ToolCallInput) -> VerifyToolOutput:
        """Whether a write whose step died took effect (`verify_write`); a read step."""
        with self._failures_reported():
            info = activity.info()
            events = self._steps.writer(request.session_id, request.turn_id)
            activity.heartbeat()
            execution = DeferredToolExecution(
                flow_id=request.session_id,
                turn_id=request.turn_id,
                tool_call=request.tool_call,
                attempt=info.attempt,
                events=events,
                heartbeat=activity.heartbeat,
                session_settings=request.session_settings,
            )
            bodies = self._steps.bodies

            async def store(text: str) -> BodyRef | None:
                assert bodies is not None
                return await bodies.store_text(text, store_scope())

            try:
                return await with_heartbeats(
                    request.heartbeat_interval,
                    verify_write(self._steps.flow.runner, execution, store if bodies is not None else None),
                )
            finally:
                events.close()
