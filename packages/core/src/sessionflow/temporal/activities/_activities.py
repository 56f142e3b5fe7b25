"""Activities: where the runner is called. One instance serves one flow on one worker."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Generator
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from sessionflow.kit._current_invocation import tool_invocation_scope
from sessionflow.kit._media_sink import MEDIA_SINK, MediaSink
from sessionflow.session.approvals import as_session_approval
from sessionflow.session.bodies import (
    UNINDEXED_MESSAGE_BYTES,
    BodyRef,
    cap_text,
    inline_size,
    is_media_ref,
    preview_text,
    utf8_size,
)
from sessionflow.session.errors import SessionError, SessionStateError
from sessionflow.session.events import AgentEvent, AgentEventType, AgentEventWriter
from sessionflow.session.framework_state import bounded_framework_state
from sessionflow.session.messages import AgentMessage, FrameworkMessage, MessageRole, message_digest
from sessionflow.session.outcomes import ContinueRequested, ToolCallsRequested, TurnCompleted
from sessionflow.session.proposals import check_proposal
from sessionflow.session.runner import AgentTurnContext, DeferredToolExecution, ImageInput
from sessionflow.session.state import AgentMessagesPage
from sessionflow.session.tools import (
    AgentToolCall,
    ToolExecutionError,
    ToolExecutionResult,
    validate_tool_call_ids,
)
from sessionflow.temporal._payloads import (
    BUILD_USER_MESSAGE,
    CALL_SINGLE_ATTEMPT_TOOL,
    CALL_TOOL,
    LIST_AGENT_MESSAGES,
    RUN_MODEL,
    VERIFY_TOOL,
    BuildUserMessageInput,
    ListAgentMessagesRequest,
    MessageIndexChunk,
    RunModelInput,
    RunModelResult,
    ToolCallInput,
    ToolCallOutput,
    VerifyToolOutput,
)
from sessionflow.temporal._summaries import model_name_of
from sessionflow.temporal.activities._carry import stored_carry
from sessionflow.temporal.activities._delta_fallback import DeltaFallback
from sessionflow.temporal.activities._model_call_gate import ModelCallGate
from sessionflow.temporal.activities._provider_retry import retry_when_provider_says
from sessionflow.temporal.activities._step_telemetry import observe_model_step, observe_tool_step
from sessionflow.temporal.activities._verify_step import verify_write
from sessionflow.temporal.storage._bodies import BodyStore, StoreScope
from sessionflow.temporal.storage._media import local_copy
from sessionflow.temporal.storage._store_errors import PayloadStoreError
from sessionflow.temporal.worker._model_call_limits import model_call_keys
from sessionflow.temporal.worker._shutdown import shutdown_fails_retryably

if TYPE_CHECKING:
    from sessionflow.kit._flow import AgentSessionFlow

T = TypeVar("T")

_CACHE_SESSIONS = 512
_FALLBACK_OUTPUT_BYTES = 64 * 1024
"""Bytes of a single-attempt tool's output kept inline when the payload store fails."""


class _CachedMessages:
    """Messages 1..n of one session with the rolling digest after each."""

    def __init__(self) -> None:
        self.messages: list[AgentMessage] = []
        self.digests: list[str] = []

    def extend(self, messages: list[AgentMessage]) -> None:
        for stored in messages:
            if stored.sequence != len(self.messages) + 1:
                raise SessionStateError(f"message {stored.sequence} does not follow {len(self.messages)}")
            self.digests.append(message_digest(self.digests[-1] if self.digests else "", stored))
            self.messages.append(stored)

    def digest_after(self, messages: list[AgentMessage]) -> str:
        digest = self.digests[-1] if self.digests else ""
        for stored in messages:
            digest = message_digest(digest, stored)
        return digest

    def truncate(self, count: int) -> None:
        del self.messages[count:]
        del self.digests[count:]

    @staticmethod
    def rolling(messages: list[AgentMessage]) -> str:
        digest = ""
        for stored in messages:
            digest = message_digest(digest, stored)
        return digest

    def digest_at(self, count: int) -> str:
        return self.digests[count - 1] if count else ""


def _non_retryable(error: Exception) -> ApplicationError:
    return ApplicationError(str(error), type=type(error).__name__, non_retryable=True)


@contextmanager
def _retry_by_class() -> Generator[None]:
    """Report a `SessionError` whose class says it is not retryable as a non-retryable failure.

    The failure keeps the error's class name as its type, so the workflow's failure notes
    read as before; the server then ends the step at once instead of retrying it.
    """
    try:
        yield
    except SessionError as error:
        if error.retryable:
            raise
        raise _non_retryable(error) from None


class SessionActivities:
    """The activities of one flow: RunModel, the two tool steps, and BuildUserMessage."""

    def __init__(
        self, flow: AgentSessionFlow, client: Client, model_calls: ModelCallGate | None = None
    ) -> None:
        self._flow = flow
        self._client = client
        self._model_calls = model_calls or ModelCallGate()  # the worker's, shared by its flows
        self._cache: OrderedDict[tuple[str, str], _CachedMessages] = OrderedDict()
        self._bodies = BodyStore.of(client)

    def activities(self) -> list[Callable[..., Any]]:
        return [
            self.run_model,
            self.call_tool,
            self.call_single_attempt_tool,
            self.build_user_message,
            self.verify_tool,
        ]

    # -- user messages -------------------------------------------------------------------

    @activity.defn(name=BUILD_USER_MESSAGE)
    async def build_user_message(self, request: BuildUserMessageInput) -> FrameworkMessage:
        with _retry_by_class(), shutdown_fails_retryably(self._client.identity):
            return await self._build_user_message(request)

    async def _build_user_message(self, request: BuildUserMessageInput) -> FrameworkMessage:
        runner = self._flow.runner
        if request.images:
            images = [await self._image(image) for image in request.images]
            # The contract's default refuses with a SessionStateError, which is not retryable.
            message = runner.build_user_message_with_images(request.text, images)
        else:
            message = runner.build_user_message(request.text)
        if message.role is not MessageRole.USER:
            raise SessionStateError(f"build_user_message returned role {message.role!r}, expected 'user'")
        if self._bodies is not None:
            message = await self._bodies.store_message(message, _scope())
        return message

    # -- model ---------------------------------------------------------------------------

    @activity.defn(name=RUN_MODEL)
    async def run_model(self, request: RunModelInput) -> RunModelResult:
        model = model_name_of(request.session_settings, self._flow.model_name)
        with observe_model_step(request.session_id, request.turn_id, model) as step:
            with _retry_by_class(), shutdown_fails_retryably(self._client.identity):
                result = await self._run_model(request)
            step.model_done(result)
            return result

    async def _run_model(self, request: RunModelInput) -> RunModelResult:
        info = activity.info()
        entries = await self._messages(request)
        messages = await self._resolved(entries)
        for image in request.media:
            await local_copy(self._require_bodies(), image)  # the runner reads it by path
        run_state = request.framework_run_state
        if request.framework_run_state_ref is not None:
            run_state = await self._require_bodies().load_text(request.framework_run_state_ref)
        carried = request.carried_state
        if request.carried_state_ref is not None:
            carried = await self._require_bodies().load_text(request.carried_state_ref)
        events = self._writer(request.session_id, request.turn_id)
        context = AgentTurnContext(
            flow_id=request.session_id,
            turn_id=request.turn_id,
            attempt=info.attempt,
            messages=messages,
            framework_run_state=run_state,
            tool_calls={r.tool_call_id: await self._model_view(r) for r in request.tool_calls},
            policy_resolver=self._flow.options.resolve_tool_policy,
            events=events,
            heartbeat=activity.heartbeat,
            session_settings=request.session_settings,
            carried_state=carried,
        )
        try:
            async with self._model_call_slot(request):
                with retry_when_provider_says():
                    outcome = await _with_heartbeats(
                        request.heartbeat_interval, self._flow.runner.run_model_step(context)
                    )
        finally:
            events.close()
        if isinstance(outcome, TurnCompleted):
            outcome = bounded_framework_state(outcome)  # bounded before it enters the history
            # Storing can take a while against a slow store: the attempt keeps heartbeating.
            outcome = await _with_heartbeats(
                request.heartbeat_interval, stored_carry(self._bodies, outcome, _scope())
            )
            return await _with_heartbeats(
                request.heartbeat_interval, self._completed(request, entries, outcome)
            )
        if isinstance(outcome, ContinueRequested):
            if not request.accepts_continue:
                raise ApplicationError(
                    "run_model_step returned ContinueRequested, and the session workflow that "
                    "scheduled this step predates continue steps; let its turn end before upgrading",
                    type="InvalidOutcomeError",
                    non_retryable=True,
                )
            state, state_ref = await self._stored_run_state(
                request, outcome.framework_run_state, "ContinueRequested"
            )
            return RunModelResult(
                continued=replace(outcome, framework_run_state=state, run_state_ref=state_ref)
            )
        if isinstance(outcome, ToolCallsRequested):  # pyright: ignore[reportUnnecessaryIsInstance]
            validate_tool_call_ids(outcome.tool_calls, context.tool_calls)
            state, state_ref = await self._stored_run_state(
                request, outcome.framework_run_state, "ToolCallsRequested"
            )
            outcome = replace(outcome, framework_run_state=state, run_state_ref=state_ref)
            catalog = self._flow.runner.tool_catalog(request.session_settings)
            if catalog is not None:
                outcome = replace(
                    outcome,
                    tool_calls=[
                        replace(c, proposal_error=check_proposal(c, catalog)) for c in outcome.tool_calls
                    ],
                )
            call_policy = self._flow.options.call_policy
            if call_policy is not None:
                settings = request.session_settings
                outcome = replace(
                    outcome,
                    tool_calls=[replace(c, policy=call_policy(c, settings)) for c in outcome.tool_calls],
                )
            if not request.accepts_asks:
                outcome = replace(outcome, tool_calls=[as_session_approval(c) for c in outcome.tool_calls])
            return RunModelResult(requested=outcome)
        raise ApplicationError(
            f"run_model_step returned {type(outcome).__name__}, "
            "expected TurnCompleted, ToolCallsRequested or ContinueRequested",
            type="InvalidOutcomeError",
            non_retryable=True,
        )

    def _model_call_slot(self, request: RunModelInput) -> AbstractAsyncContextManager[None]:
        """A slot of every model call limit of this worker the call counts against."""
        timeout = activity.info().start_to_close_timeout
        return self._model_calls.slot(
            model_call_keys(self._flow.runner, request.session_settings),
            heartbeat=activity.heartbeat,
            interval=request.heartbeat_interval,
            max_wait=timeout.total_seconds() / 2 if timeout else None,
        )

    async def _stored_run_state(
        self, request: RunModelInput, state: str, outcome_name: str
    ) -> tuple[str, BodyRef | None]:
        """The run state as the workflow records it: inline when small, else ("", its reference)."""
        if not state:
            raise SessionStateError(f"{outcome_name} has an empty framework_run_state")
        if self._bodies is None:
            return state, None
        state_ref = await _with_heartbeats(
            request.heartbeat_interval, self._bodies.store_text(state, _scope())
        )
        return ("", state_ref) if state_ref is not None else (state, None)

    def _writer(self, session_id: str, turn_id: str) -> AgentEventWriter:
        """An event writer for this attempt: live transport, plus coarse batches if nobody listens."""
        info = activity.info()
        transport = self._flow.delta_transport
        fallback: DeltaFallback | None = None
        if self._flow.delta_fallback and not transport.has_subscribers(session_id):
            fallback = DeltaFallback(self._client, session_id)

        def sink(event: AgentEvent) -> None:
            transport.publish(session_id, event)
            if fallback is not None:
                fallback.add(event)

        writer = _StepWriter(
            sink, fallback, turn_id=turn_id, step_execution_id=info.activity_id, attempt=info.attempt
        )
        if info.attempt > 1:
            writer.write_event(AgentEventType.ATTEMPT_RESTARTED, {"previous_attempt": info.attempt - 1})
        return writer

    def _media_sink(self) -> MediaSink | None:
        """Media a tool saves (MCP images, audio, blobs) also go to the session's payload store."""
        bodies = self._bodies
        if bodies is None:
            return None
        scope = _scope()

        async def sink(data: bytes, mime_type: str) -> None:
            await bodies.put(data, scope)

        return sink

    async def _image(self, image: str) -> ImageInput:
        if not is_media_ref(image):
            return ImageInput(path=image, media_type=_media_type(image))  # a path every worker reaches
        path, media_type = await local_copy(self._require_bodies(), image)
        return ImageInput(path=str(path), media_type=media_type)

    def _require_bodies(self) -> BodyStore:
        if self._bodies is None:
            raise SessionStateError("this session keeps bodies in a payload store, and this worker has none")
        return self._bodies

    async def _resolved(self, entries: list[AgentMessage]) -> list[AgentMessage]:
        """The messages as the runner first returned them, bodies read back from the store."""
        if not any(stored.message.body is not None for stored in entries):
            return entries
        bodies = self._require_bodies()
        return [
            replace(stored, message=await bodies.load_message(stored.message))
            if stored.message.body
            else stored
            for stored in entries
        ]

    async def _model_view(self, record: AgentToolCall) -> AgentToolCall:
        """A tool call record as the model sees it: its whole output, capped for the model."""
        cap = self._flow.options.tool_output_cap(record.policy)
        if record.state_update_ref is not None:
            # The update is framework state, never capped: the runner gets all of it.
            update = await self._require_bodies().load_text(record.state_update_ref, cache=False)
            record = replace(record, state_update=update, state_update_ref=None)
        if record.output_ref is not None:
            return await self._require_bodies().model_view(record, cap)
        if record.output is None:
            return record
        return replace(record, output=cap_text(record.output, cap))

    async def _completed(
        self, request: RunModelInput, entries: list[AgentMessage], outcome: TurnCompleted
    ) -> RunModelResult:
        """Store the turn's large messages and the index chunk that covers the whole turn."""
        bodies = self._bodies
        if bodies is None:
            self._remember(request, entries, outcome.new_messages)
            return RunModelResult(completed=outcome)
        scope = _scope()
        kept = [await bodies.store_message(m, scope) for m in outcome.new_messages]
        start = len(entries) + 1
        added = [
            AgentMessage(sequence=start + i, turn_id=request.turn_id, message=m) for i, m in enumerate(kept)
        ]
        covered = request.prefix_count if request.prefix_ref is not None else 0
        unindexed = [*entries[covered:], *added]
        if _inline_bytes(unindexed) <= min(UNINDEXED_MESSAGE_BYTES, bodies.inline_limit):
            # Few bytes not indexed yet: they keep riding inline, and this turn writes nothing.
            self._remember(request, entries, kept)
            return RunModelResult(completed=replace(outcome, new_messages=kept))
        chunk = MessageIndexChunk(
            first=covered + 1,
            entries=unindexed,
            parent=request.prefix_ref if covered else None,
        )
        cached = self._cache.get((request.session_id, request.session_nonce))
        digest = (
            cached.digest_after(added) if cached is not None and len(cached.messages) == len(entries) else ""
        )
        if not digest:
            digest = _CachedMessages.rolling([*entries, *added])
        index_ref = await bodies.put(chunk, scope)
        self._remember(request, entries, kept)
        return RunModelResult(
            completed=replace(outcome, new_messages=kept),
            index_ref=index_ref,
            index_count=len(entries) + len(added),
            index_digest=digest,
        )

    async def _messages(self, request: RunModelInput) -> list[AgentMessage]:
        """Every stored message as the session keeps it: cached prefix if its digest matches,
        else read through the stored index (or, for inputs recorded before it, the workflow)."""
        key = (request.session_id, request.session_nonce)
        cached = self._cache.pop(key, None) or _CachedMessages()
        self._cache[key] = cached
        while len(self._cache) > _CACHE_SESSIONS:
            self._cache.popitem(last=False)
        count = request.prefix_count
        if len(cached.messages) < count or cached.digest_at(count) != request.prefix_digest:
            cached.truncate(0)
            if request.prefix_ref is not None:
                await self._read_index(cached, request.prefix_ref)
            else:
                await self._fetch_into(cached, request.session_id, count)
        cached.truncate(count)
        if cached.digest_at(count) != request.prefix_digest:
            raise SessionStateError("stored messages do not match the session's digest")
        cached.extend(request.tail)
        return list(cached.messages)

    async def _read_index(self, cached: _CachedMessages, ref: BodyRef) -> None:
        bodies = self._require_bodies()
        chunks: list[MessageIndexChunk] = []
        link: BodyRef | None = ref
        while link is not None:
            chunk = await bodies.get(link, MessageIndexChunk)
            if not isinstance(chunk, MessageIndexChunk):
                raise SessionStateError("the payload store holds a message index chunk of the wrong shape")
            chunks.append(chunk)
            link = chunk.parent
        for chunk in reversed(chunks):
            cached.extend(chunk.entries)

    async def _fetch_into(self, cached: _CachedMessages, session_id: str, count: int) -> None:
        handle = self._client.get_workflow_handle(session_id)
        while len(cached.messages) < count:
            page = await handle.query(
                LIST_AGENT_MESSAGES,
                ListAgentMessagesRequest(after=len(cached.messages), limit=200),
                result_type=AgentMessagesPage,
            )
            if not page.messages:
                raise SessionStateError(f"session {session_id!r} has fewer than {count} messages")
            cached.extend(page.messages[: count - len(cached.messages)])

    def _remember(
        self, request: RunModelInput, messages: list[AgentMessage], new: list[FrameworkMessage]
    ) -> None:
        # The workflow appends the answer right after the messages we saw; cache it so the
        # next turn's prefix is a hit. The digest check catches any mismatch.
        cached = self._cache.get((request.session_id, request.session_nonce))
        if cached is None or len(cached.messages) != len(messages):
            return
        start = len(messages) + 1
        cached.extend(
            [AgentMessage(sequence=start + i, turn_id=request.turn_id, message=m) for i, m in enumerate(new)]
        )

    # -- tools ---------------------------------------------------------------------------

    @activity.defn(name=CALL_TOOL)
    async def call_tool(self, request: ToolCallInput) -> ToolCallOutput:
        return await self._run_tool(request)

    @activity.defn(name=CALL_SINGLE_ATTEMPT_TOOL)
    async def call_single_attempt_tool(self, request: ToolCallInput) -> ToolCallOutput:
        return await self._run_tool(request)

    async def _run_tool(self, request: ToolCallInput) -> ToolCallOutput:
        with observe_tool_step(request.session_id, request.turn_id, request.tool_call) as step:
            with _retry_by_class(), shutdown_fails_retryably(self._client.identity):
                output = await self._run_tool_once(request)
            step.tool_done(output)
            return output

    async def _run_tool_once(self, request: ToolCallInput) -> ToolCallOutput:
        info = activity.info()
        record = request.tool_call
        events = self._writer(request.session_id, request.turn_id)
        events.write_tool_call_started(record.tool_call_id, record.tool_name)
        # No heartbeat before the tool acts (the reference engine's, which narrows a window in
        # which its queue redelivers a step to a second worker): Temporal gives an attempt to
        # one worker only, and the heartbeat timeout runs from the attempt's start whether or
        # not it beat. That heartbeat cost a tool step an RPC its completion waited for.
        execution = DeferredToolExecution(
            flow_id=request.session_id,
            turn_id=request.turn_id,
            tool_call=record,
            attempt=info.attempt,
            events=events,
            heartbeat=activity.heartbeat,
            session_settings=request.session_settings,
            run_state=await self._tool_run_state(request),
        )
        sink_token = MEDIA_SINK.set(self._media_sink())
        try:
            # The one place the current invocation is set: every adapter's tools read it.
            with tool_invocation_scope(execution.invocation):
                result: ToolExecutionResult = await _with_heartbeats(
                    request.heartbeat_interval, self._flow.runner.execute_deferred_tool_call(execution)
                )
        except ToolExecutionError as error:
            # The failure's own account is small framework text (a retry prompt): kept inline.
            return ToolCallOutput(error=error.message, state_update=error.state_update)
        finally:
            MEDIA_SINK.reset(sink_token)
            events.close()
        if self._bodies is not None:
            try:
                ref = await _with_heartbeats(
                    request.heartbeat_interval, self._bodies.store_text(result.output, _scope())
                )
            except PayloadStoreError as error:
                if record.policy.effect.is_retryable:
                    raise  # the step runs again once the store is back
                # A single-attempt tool has run: failing now would record outcome_unknown and
                # lose a known success. Keep a head small enough for the history instead.
                if (
                    result.state_update is not None
                    and utf8_size(result.state_update) > _FALLBACK_OUTPUT_BYTES
                ):
                    raise  # a cut update is no update: the call ends outcome_unknown instead
                return ToolCallOutput(
                    output=cap_text(result.output, _FALLBACK_OUTPUT_BYTES, what=f"output ({error})"),
                    state_update=result.state_update,
                )
            update, update_ref = await self._stored_state_update(request, result)
            if ref is not None:
                return ToolCallOutput(
                    output=preview_text(result.output),
                    output_ref=ref,
                    state_update=update,
                    state_update_ref=update_ref,
                )
            return ToolCallOutput(output=result.output, state_update=update, state_update_ref=update_ref)
        return ToolCallOutput(output=result.output, state_update=result.state_update)

    async def _tool_run_state(self, request: ToolCallInput) -> str | None:
        """The run state of the model step that deferred the call, loaded when stored."""
        if request.run_state_ref is None:
            return request.run_state
        return await _with_heartbeats(
            request.heartbeat_interval, self._require_bodies().load_text(request.run_state_ref)
        )

    async def _stored_state_update(
        self, request: ToolCallInput, result: ToolExecutionResult
    ) -> tuple[str | None, BodyRef | None]:
        """The update as the workflow records it: inline when small, else (None, its reference).

        Unlike an output, a store failure is not softened: the update is framework state,
        and a head of it is no update at all. The step fails and runs again (a read or an
        idempotent write) or ends outcome_unknown (a non-idempotent write).
        """
        if result.state_update is None:
            return None, None
        assert self._bodies is not None
        ref = await _with_heartbeats(
            request.heartbeat_interval, self._bodies.store_text(result.state_update, _scope())
        )
        return (None, ref) if ref is not None else (result.state_update, None)

    @activity.defn(name=VERIFY_TOOL)
    async def verify_tool(self, request: ToolCallInput) -> VerifyToolOutput:
        """Whether a write whose step died took effect (`_verify_step`); a read step."""
        with _retry_by_class(), shutdown_fails_retryably(self._client.identity):
            info = activity.info()
            events = self._writer(request.session_id, request.turn_id)
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
            bodies = self._bodies

            async def store(text: str) -> BodyRef | None:
                assert bodies is not None
                return await bodies.store_text(text, _scope())

            try:
                return await _with_heartbeats(
                    request.heartbeat_interval,
                    verify_write(self._flow.runner, execution, store if bodies is not None else None),
                )
            finally:
                events.close()


class _StepWriter(AgentEventWriter):
    """Closes its fallback batcher along with the writer."""

    def __init__(
        self,
        sink: Callable[[AgentEvent], None],
        fallback: DeltaFallback | None,
        *,
        turn_id: str,
        step_execution_id: str,
        attempt: int,
    ) -> None:
        super().__init__(sink, turn_id=turn_id, step_execution_id=step_execution_id, attempt=attempt)
        self._fallback = fallback

    def close(self) -> None:
        super().close()
        if self._fallback is not None:
            self._fallback.close()


async def _with_heartbeats(interval: float, work: Awaitable[T]) -> T:
    """Await `work` while heartbeating in the background, so a dead worker is noticed."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(interval)
            activity.heartbeat()

    beater = asyncio.create_task(beat())
    try:
        return await work
    finally:
        beater.cancel()


def _scope() -> StoreScope:
    """The running activity's session, which the store groups its objects by."""
    info = activity.info()
    return StoreScope(
        namespace=info.workflow_namespace or info.namespace,
        session_id=info.workflow_id or "",
        flow_type=info.workflow_type,
        run_id=info.workflow_run_id,
    )


def _media_type(path: str) -> str:
    suffix = path.rsplit(".", 1)[-1].lower()
    return {
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
    }.get(suffix, "application/octet-stream")


def _inline_bytes(messages: list[AgentMessage]) -> int:
    return sum(inline_size(m.message.framework_item, m.message.text) for m in messages)
