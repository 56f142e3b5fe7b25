"""A server that does not answer: one `ServerUnreachableError`, and no retry warnings in the log.

The client runs in a child process, so that what temporalio's core writes to the console
(it writes there itself, not through `logging`) is the child's output alone.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap

from sessionflow import ServerUnreachableError

CHILD = textwrap.dedent(
    """
    import asyncio, logging, os, sys

    from sessionflow import ServerUnreachableError, connect

    logging.basicConfig(level=logging.DEBUG)  # whatever the client logs would show


    async def pipe(reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()


    async def main(closed, target):
        try:
            await connect(closed)
        except ServerUnreachableError as error:
            print("connect:", error)
        # A server that answers first and then goes away: a proxy we close.
        host, port = target.rsplit(":", 1)
        links = []

        async def forward(reader, writer):
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
            links.extend([writer, up_writer])
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

        proxy = await asyncio.start_server(forward, "127.0.0.1", 0)
        address = "127.0.0.1:%d" % proxy.sockets[0].getsockname()[1]
        client = await connect(address)
        await client.count_workflows()
        proxy.close()
        for link in links:
            link.close()
        await proxy.wait_closed()
        try:
            await client.get_workflow_handle("no-such-session").describe()
        except ServerUnreachableError as error:
            print("describe:", type(error).__name__, error.address == address)


    asyncio.run(main(sys.argv[1], sys.argv[2]))
    # A client still open at exit can abort the interpreter's finalization from temporalio's
    # core threads (PyGILState_Release, with the default runtime too): skip finalization.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
    """
)


def _closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def test_an_unreachable_server_raises_one_clear_error_and_logs_no_retries(temporal_address: str) -> None:
    closed = _closed_port()
    child = subprocess.run(
        [sys.executable, "-c", CHILD, closed, temporal_address],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    lines = child.stdout.splitlines()
    assert lines[0].startswith(f"connect: the Temporal server at {closed} is unreachable: ")
    assert lines[1] == "describe: ServerUnreachableError True"
    output = child.stdout + child.stderr  # core's console log goes to stdout
    assert "retried" not in output
    assert "WARN" not in output
    assert "Traceback" not in output
    assert len(lines) == 2


def test_the_error_survives_pickling_and_is_a_runtime_error() -> None:
    import pickle

    error = ServerUnreachableError("127.0.0.1:1", "Connection refused")
    assert isinstance(error, RuntimeError)  # what connect() raised before
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.address, copy.reason, str(copy)) == (error.address, error.reason, str(error))
