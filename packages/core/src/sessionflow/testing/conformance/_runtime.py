"""What every case of one pytest run shares: an event loop thread, the model server, the dev server.

It also names the environment a conformance worker child reads (the driver sets it through
`AgentTestStack`), so the driver and the worker agree on it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import secrets
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sessionflow.demo._model_server import ScriptedModelServer

if TYPE_CHECKING:
    from sessionflow.testing.conformance._driver import PlayedCase

__all__ = [
    "CASE_FILE_ENV",
    "FLOW_TYPE_ENV",
    "FRAMEWORK_ENV",
    "MODEL_BASE_URL_ENV",
    "WORKER_MODULE",
    "ConformanceRuntime",
    "LoopThread",
]

T = TypeVar("T")

# The environment of a worker child (``python -m sessionflow.testing.conformance.worker``).
WORKER_MODULE = "sessionflow.testing.conformance.worker"
CASE_FILE_ENV = "SESSIONFLOW_CONFORMANCE_CASE_FILE"
FRAMEWORK_ENV = "SESSIONFLOW_CONFORMANCE_FRAMEWORK"
FLOW_TYPE_ENV = "SESSIONFLOW_CONFORMANCE_FLOW_TYPE"
MODEL_BASE_URL_ENV = "SESSIONFLOW_CONFORMANCE_MODEL_BASE_URL"


class LoopThread:
    """An asyncio loop in a daemon thread.

    The suite's tests are plain functions that hand coroutines to this loop, so the plugin
    works whether or not the host project uses pytest-asyncio, and never touches its loop.
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="sessionflow-conformance-loop", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run ``coro`` on the loop and wait for it; cancel it (and let it clean up) after ``timeout``."""
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            concurrent.futures.wait([future], timeout=30)
            raise TimeoutError(f"gave up after {timeout:g} s") from None
        except BaseException:
            # KeyboardInterrupt and friends: stop the coroutine so its cleanup kills the workers.
            if not future.done():
                future.cancel()
                concurrent.futures.wait([future], timeout=30)
            raise

    def close(self) -> None:
        async def drain() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self._loop.shutdown_asyncgens()

        if self._loop.is_closed():
            return
        self.run(drain(), timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()


@dataclass
class ConformanceRuntime:
    """The shared pieces of one run.

    Attributes:
        server_address: The Temporal dev server.
        model_server: The scripted model server, a thread of the test process; workers reach
            it over loopback.
        loop: Where cases run.
        work_dir: Parent of every case's state folder.
        token: Random per run, part of every session ID, flow type and model key, so runs can
            share a long-lived dev server.
        after_play: Extra checks, run after a case met its expectations, while its client
            is still connected (none by default). Each is awaited with the `PlayedCase`
            on the loop; one that raises fails the case.
    """

    server_address: str
    model_server: ScriptedModelServer
    loop: LoopThread
    work_dir: Path
    token: str
    after_play: list[Callable[[PlayedCase], Awaitable[None]]] = field(default_factory=lambda: [])
    _plays: int = 0

    @classmethod
    def start(cls, server_address: str, loop: LoopThread, work_dir: Path) -> ConformanceRuntime:
        return cls(
            server_address=server_address,
            model_server=ScriptedModelServer().start(),
            loop=loop,
            work_dir=work_dir,
            token=secrets.token_hex(3),
        )

    def play_name(self, run_id: str) -> str:
        """A name no other play on this runtime has: the session ID, flow type and model key.

        One runtime can play the same case twice (the plain and the by-reference suites share a
        worker's runtime), and a session ID is never reused on the server.
        """
        self._plays += 1
        return f"conf-{self.token}-{self._plays}-{run_id}"

    def close(self) -> None:
        self.model_server.stop()
