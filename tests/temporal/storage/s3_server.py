"""An S3 endpoint for the tests: moto's server mode in a subprocess, behind a proxy we can stop.

moto speaks S3's wire protocol but keeps its objects in memory, so stopping moto itself
would lose the bucket and every object, which no real S3 outage does. The tests stop and
restart a loopback TCP proxy in front of moto instead: the endpoint goes down (new
connections are refused, open ones are cut) and comes back on the same port, and the
objects survive, as with a real S3 outage.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["AWS_TEST_ENV", "MotoServer", "S3Proxy", "aws_test_environment", "create_bucket", "list_objects"]

AWS_TEST_ENV: Mapping[str, str] = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
    # Never read a developer's own AWS files or ask an instance metadata service.
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_EC2_METADATA_DISABLED": "true",
}


@contextlib.contextmanager
def aws_test_environment() -> Generator[None]:
    """Dummy credentials in os.environ, which worker children inherit; restored after."""
    saved = {name: os.environ.get(name) for name in AWS_TEST_ENV}
    os.environ.update(AWS_TEST_ENV)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class MotoServer:
    """``python -m moto.server`` on a free loopback port, in its own process group."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        with self.log_path.open("wb") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self._process.poll() is not None:
                raise RuntimeError(f"moto_server exited with {self._process.returncode}:\n{self._log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(
                    f"moto_server did not answer on {self.url} within {timeout} s:\n{self._log_tail()}"
                )
            time.sleep(0.05)  # a poll interval under the deadline above

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.url, timeout=1):
                return True
        except urllib.error.HTTPError:
            return True  # any HTTP answer means the server is up
        except OSError:
            return False

    def _log_tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""

    def stop(self) -> None:
        """Stop our own moto process (by its PID), killing it if it does not exit."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def running_moto(log_path: Path) -> Generator[MotoServer]:
    """A moto server with the dummy AWS environment set, stopped (only this one) at the end."""
    with aws_test_environment():
        server = MotoServer(log_path)
        server.start()
        try:
            yield server
        finally:
            server.stop()


class S3Proxy:
    """A loopback TCP proxy to `upstream_port` whose listener the test stops and restarts."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections = 0
        """Connections accepted: proof that clients really went through the proxy."""
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        # The same port each time (asyncio sets SO_REUSEADDR), so clients keep their URL.
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def stop(self) -> None:
        """Refuse new connections and cut the open ones (pooled keep-alive ones too)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()
        await server.wait_closed()

    async def _serve(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            client_writer.transport.abort()
            return
        self._open.update((client_writer, upstream_writer))
        try:
            await asyncio.gather(
                _pipe(client_reader, upstream_writer),
                _pipe(upstream_reader, client_writer),
                return_exceptions=True,
            )
        except asyncio.CancelledError:
            pass  # the loop ends with a connection open: asyncio's callback would log the cancel
        finally:
            for writer in (client_writer, upstream_writer):
                self._open.discard(writer)
                writer.transport.abort()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while chunk := await reader.read(1 << 16):
        writer.write(chunk)
        await writer.drain()
    if writer.can_write_eof():
        writer.write_eof()


def _s3_client(endpoint: str) -> Any:
    import aioboto3
    from botocore.config import Config

    session: Any = aioboto3.Session()
    return session.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", config=Config(s3={"addressing_style": "path"})
    )


async def create_bucket(endpoint: str, bucket: str) -> None:
    async with _s3_client(endpoint) as s3:
        await s3.create_bucket(Bucket=bucket)


async def list_objects(endpoint: str, bucket: str, prefix: str = "") -> dict[str, int]:
    """Every object under `prefix`: key to size in bytes."""
    found: dict[str, int] = {}
    async with _s3_client(endpoint) as s3:
        paginator = s3.get_paginator("list_objects_v2")
        async for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                found[str(item["Key"])] = int(item["Size"])
    return found
