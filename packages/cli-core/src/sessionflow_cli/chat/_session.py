"""The session a chat talks to: started with the first message, or resumed."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sessionflow import AgentSnapshot, MessageRole
from sessionflow_cli._command_host import Runtime
from sessionflow_cli._images import sniff_media_type
from sessionflow_cli._sessions import check_resumable, new_session_id
from sessionflow_cli.chat._pump import EventPump
from sessionflow_cli.chat._view import ChatView

__all__ = ["ChatSession", "show_history"]


class ChatSession:
    """One session of this command's flow type, and the pump of its events."""

    def __init__(self, runtime: Runtime, session_id: str, *, exists: bool) -> None:
        self.runtime = runtime
        self.session_id = session_id
        self.exists = exists
        self.pump: EventPump | None = None

    @classmethod
    def new(cls, runtime: Runtime) -> ChatSession:
        return cls(runtime, new_session_id(runtime.spec.name), exists=False)

    @classmethod
    async def resume(cls, runtime: Runtime, session_id: str) -> ChatSession:
        """Continue `session_id`; exits with code 2 unless it is an open session of this flow type."""
        await check_resumable(runtime.sessions, session_id)
        session = cls(runtime, session_id, exists=True)
        offset = await runtime.sessions.latest_event_offset(session_id)
        session.pump = EventPump(runtime.sessions, session_id, after=offset)
        return session

    async def send(
        self,
        text: str,
        *,
        images: Sequence[str] = (),
        settings: Mapping[str, Any] | None = None,
        double_texting: str | None = None,
    ) -> bool:
        """Send a message, starting the session first when this is its first message.

        ``double_texting`` is the message's policy while a turn runs (``steer``: it joins
        the turn); every send has its own message ID, so a retry is harmless.
        """
        sessions = self.runtime.sessions
        if not self.exists:
            await sessions.start_session(
                self.session_id, None, environment=self.runtime.environment.as_record()
            )
            self.exists = True
            self.pump = EventPump(sessions, self.session_id)
        # Images travel through the payload store, so a worker on another machine reads them too.
        stored = [await self._upload(Path(path)) for path in images]
        # The session takes the message only once a worker runs it: a resident worker that
        # fails to start ends the wait (`Runtime.watch`) instead of leaving it hanging.
        return await self.runtime.watch(
            sessions.send_user_message(
                self.session_id,
                text,
                images=stored,
                settings=settings,
                message_id=str(uuid.uuid4()),
                double_texting=double_texting,
            )
        )

    async def _upload(self, path: Path) -> str:
        data = await asyncio.to_thread(path.read_bytes)
        media_type = sniff_media_type(data[:16]) or "application/octet-stream"
        return await self.runtime.sessions.upload_image(self.session_id, data, media_type)

    async def snapshot(self) -> AgentSnapshot:
        return await self.runtime.sessions.get_agent_snapshot(self.session_id)

    def link(self) -> str | None:
        return self.runtime.engine.session_link(self.session_id)

    async def close(self) -> None:
        if self.pump is not None:
            await self.pump.close()


def show_history(snapshot: AgentSnapshot, view: ChatView, *, last: int = 6) -> None:
    """The last few messages of a resumed session."""
    shown = [m for m in snapshot.messages if m.message.role in (MessageRole.USER, MessageRole.ASSISTANT)]
    shown = [m for m in shown if m.message.text][-last:]
    if not shown:
        return
    view.note(f"Last messages of {snapshot.message_count}:")
    for stored in shown:
        who = "you" if stored.message.role is MessageRole.USER else "agent"
        text = " ".join((stored.message.text or "").split())
        view.note(f"  {who}> {text[:300]}")
