"""Watches one RunModel step through LangChain callbacks: one model call, no tools, usage.

The handler stops a second model call (or any tool run) before it starts by raising
from its callback, so the step never sends a request it must not send. It also keeps
the reason, so the step fails with it even if a node catches the exception.
"""

from __future__ import annotations

import threading
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langgraph.errors import GraphRecursionError

from sessionflow import AgentUsage
from sessionflow_langgraph._errors import StepViolation
from sessionflow_langgraph._unstreamed import unstream

__all__ = ["INTERNAL_CALL_KEY", "StepMonitor", "StepViolation"]

INTERNAL_CALL_KEY = "lc_internal_call"
"""LangChain's metadata key for a model call internal to a middleware
(``langchain.agents.middleware.internal_call_transformer.internal_call_metadata``)."""
NS_SEP = "|"  # LangGraph's separator of nested checkpoint namespaces


class StepMonitor(BaseCallbackHandler):
    """Counts model calls per step, records their usage, and forbids tool runs.

    One run of one node may make more than one request when all but the last are not its
    answer: a call that failed (a `RetryPolicy`, ``ModelFallbackMiddleware``,
    ``ModelRetryMiddleware`` call again), and a call LangChain marks as internal to a
    middleware (``LLMToolSelectorMiddleware``'s selection). Those run in the same step, as
    they run in the same node, with no checkpoint between them.

    It also keeps the run's recursion limit across steps (`run_stop`) and hands every
    model result to `unstream` before the node gets it.
    """

    raise_error = True
    # Not inline: the async callback manager then gathers this handler with the others,
    # so raising from it leaves no other handler's coroutine un-awaited.
    run_inline = False

    def __init__(self, tool_node: str) -> None:
        self._tool_node = tool_node
        self._lock = threading.Lock()
        self.model_nodes: list[str] = []
        self._first_task: str | None = None
        self._calls: dict[UUID, tuple[bool, str]] = {}
        """The first task's calls: internal or not, and ``running``, ``ok`` or ``failed``."""
        self.usage = AgentUsage()
        self.violation: str | None = None
        self.continue_node: str | None = None
        """The node whose model call was stopped so that it runs in the next step (a continue)."""
        self.run_stop: int | None = None
        """The top graph's super-step past which the run stops (`_run_scope`); None: no check."""

    # -- model calls ---------------------------------------------------------------------

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_call(run_id, metadata)

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self._model_call(run_id, metadata)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        usage = _usage(response)
        for generations in response.generations:
            for generation in generations:
                if isinstance(generation, ChatGeneration) and isinstance(generation.message, AIMessage):
                    unstream(generation.message)  # the node gets what a non-streamed call returns
        with self._lock:
            self.usage = self.usage + usage
            self._settle(run_id, "ok")

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            self._settle(run_id, "failed")

    def _settle(self, run_id: UUID, outcome: str) -> None:
        known = self._calls.get(run_id)
        if known is not None:
            self._calls[run_id] = (known[0], outcome)

    def _model_call(self, run_id: UUID, metadata: dict[str, Any] | None) -> None:
        node = _node(metadata)
        task = str((metadata or {}).get("langgraph_checkpoint_ns") or "")
        internal = bool((metadata or {}).get(INTERNAL_CALL_KEY))
        with self._lock:
            self.model_nodes.append(node)
            if len(self.model_nodes) < 2:
                self._first_task = task
                self._calls[run_id] = (internal, "running")
                return
            if task and task != self._first_task:
                # Another task: the checkpoint before it holds the first call's result, so
                # the next step resumes there and this call is its one model call.
                self.continue_node = node
                raise StepViolation(f"node {node!r} calls the model again; it runs in the next step")
            answered = [
                outcome
                for was_internal, outcome in self._calls.values()
                if not was_internal and outcome != "failed"
            ]
            if not answered:
                # Earlier calls of this run of the node failed or were a middleware's own:
                # this is the node's answer still (a retry, a fallback, after a selection).
                self._calls[run_id] = (internal, "running")
                return
            first, second = self.model_nodes[0], self.model_nodes[-1]
            where = f"node {second!r} called it again" if second != first else "it called the model again"
            self.violation = (
                f"the graph made a second model call in one RunModel step: node {first!r} called the model, "
                f"then {where} in the same run of the node, before the graph reached its tool node "
                f"{self._tool_node!r} or the end. sessionflow runs exactly one model call per step, and a "
                "node runs whole within one step: make each model call a node of its own."
            )
            raise StepViolation(self.violation)

    # -- the run's recursion limit ---------------------------------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        stop = self.run_stop
        step: Any = (metadata or {}).get("langgraph_step")
        ns = str((metadata or {}).get("langgraph_checkpoint_ns") or "")
        if stop is None or not isinstance(step, int) or NS_SEP in ns:
            return  # not a task of the top graph (a subgraph counts its own steps)
        if step > stop:
            # Plain LangGraph would have stopped before this super-step (LangGraph's own
            # check takes a step limit of at least 1, so the last steps are checked here).
            raise GraphRecursionError(f"the run passed its stop at super-step {stop}")

    # -- tools ---------------------------------------------------------------------------

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = str((serialized or {}).get("name") or kwargs.get("name") or "?")
        with self._lock:
            self.violation = (
                f"node {_node(metadata)!r} ran tool {name!r} inside a RunModel step. sessionflow runs every tool "
                f"as its own durable step: let the tool node {self._tool_node!r} handle tool calls."
            )
        raise StepViolation(self.violation)


def _node(metadata: dict[str, Any] | None) -> str:
    return str((metadata or {}).get("langgraph_node") or "<outside any node>")


def _usage(response: LLMResult) -> AgentUsage:
    """Usage of one model call, from the message's `usage_metadata` (or the LLM output)."""
    for generations in response.generations:
        for generation in generations:
            if isinstance(generation, ChatGeneration):
                metadata = getattr(generation.message, "usage_metadata", None)
                if metadata:
                    return AgentUsage(
                        requests=1,
                        input_tokens=int(metadata.get("input_tokens", 0) or 0),
                        output_tokens=int(metadata.get("output_tokens", 0) or 0),
                    )
    token_usage: Any = (response.llm_output or {}).get("token_usage") or {}
    return AgentUsage(
        requests=1,
        input_tokens=int(token_usage.get("prompt_tokens", 0) or 0),
        output_tokens=int(token_usage.get("completion_tokens", 0) or 0),
    )
