"""The steps of every flow a worker serves, under the activity names the workflow records.

Flows may share a task queue, and an activity's name is the same for every flow (it is part
of recorded histories). So one set of activities serves them all: each finds its flow by
the workflow type of the session that scheduled it, which is the flow type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from sessionflow.kit._flow import AgentSessionFlow
from sessionflow.session.messages import FrameworkMessage
from sessionflow.temporal._payloads import (
    BUILD_USER_MESSAGE,
    CALL_SINGLE_ATTEMPT_TOOL,
    CALL_TOOL,
    FLOW_RUN_CONFIG,
    RUN_MODEL,
    VERIFY_TOOL,
    BuildUserMessageInput,
    RunModelInput,
    RunModelResult,
    SessionRunConfig,
    ToolCallInput,
    ToolCallOutput,
    VerifyToolOutput,
)
from sessionflow.temporal.activities._model_call_gate import ModelCallGate
from sessionflow.temporal.activities._model_step import ModelStepActivities
from sessionflow.temporal.activities._step_context import StepContext
from sessionflow.temporal.activities._tool_step import ToolStepActivities
from sessionflow.temporal.activities._user_message_step import UserMessageActivities
from sessionflow.temporal.activities._verify_step import VerifyStepActivities
from sessionflow.temporal.worker._run_config import run_config

__all__ = ["UNKNOWN_FLOW_ERROR", "FlowRouter"]

UNKNOWN_FLOW_ERROR = "UnknownFlowError"
"""The failure type of a step whose session's flow this worker does not serve."""


@dataclass(frozen=True)
class _FlowSteps:
    """One flow's step classes, sharing its `StepContext`."""

    flow: AgentSessionFlow
    user_message: UserMessageActivities
    model: ModelStepActivities
    tools: ToolStepActivities
    verify: VerifyStepActivities

    @classmethod
    def of(cls, flow: AgentSessionFlow, client: Client, model_calls: ModelCallGate) -> _FlowSteps:
        steps = StepContext(flow, client)
        return cls(
            flow=flow,
            user_message=UserMessageActivities(steps),
            model=ModelStepActivities(steps, model_calls),
            tools=ToolStepActivities(steps),
            verify=VerifyStepActivities(steps),
        )


class FlowRouter:
    """The activities of `flows` on one worker; they share one payload store and model call gate."""

    def __init__(
        self, flows: Sequence[AgentSessionFlow], client: Client, model_calls: ModelCallGate | None = None
    ) -> None:
        gate = model_calls or ModelCallGate()
        self._flows: dict[str, _FlowSteps] = {}
        for flow in flows:
            if flow.flow_type in self._flows:
                raise ValueError(f"flow type {flow.flow_type!r} is given twice")
            self._flows[flow.flow_type] = _FlowSteps.of(flow, client, gate)

    def activities(self) -> list[Callable[..., Any]]:
        return [
            self.flow_run_config,
            self.build_user_message,
            self.run_model,
            self.call_tool,
            self.call_single_attempt_tool,
            self.verify_tool,
        ]

    def _steps(self) -> _FlowSteps:
        flow_type = activity.info().workflow_type or ""
        steps = self._flows.get(flow_type)
        if steps is None:
            # Retryable: in a rolling deploy that adds a flow, another worker of the queue may serve it.
            raise ApplicationError(
                f"this worker serves no flow {flow_type!r} (it serves {sorted(self._flows)})",
                type=UNKNOWN_FLOW_ERROR,
            )
        return steps

    @activity.defn(name=FLOW_RUN_CONFIG)
    async def flow_run_config(self) -> SessionRunConfig:
        return run_config(self._steps().flow)

    @activity.defn(name=BUILD_USER_MESSAGE)
    async def build_user_message(self, request: BuildUserMessageInput) -> FrameworkMessage:
        return await self._steps().user_message.build_user_message(request)

    @activity.defn(name=RUN_MODEL)
    async def run_model(self, request: RunModelInput) -> RunModelResult:
        return await self._steps().model.run_model(request)

    @activity.defn(name=CALL_TOOL)
    async def call_tool(self, request: ToolCallInput) -> ToolCallOutput:
        return await self._steps().tools.call_tool(request)

    @activity.defn(name=CALL_SINGLE_ATTEMPT_TOOL)
    async def call_single_attempt_tool(self, request: ToolCallInput) -> ToolCallOutput:
        return await self._steps().tools.call_single_attempt_tool(request)

    @activity.defn(name=VERIFY_TOOL)
    async def verify_tool(self, request: ToolCallInput) -> VerifyToolOutput:
        return await self._steps().verify.verify_tool(request)
