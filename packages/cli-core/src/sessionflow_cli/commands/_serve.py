"""`sessionflow serve`: the HTTP API over this command's sessions, with their worker in-process.

It serves the flow the chat command serves (same framework, configuration, tools and
flow type), so the sessions of `sessionflow chat` on this machine are listed and their
approvals can be answered from a browser or any HTTP client. It binds to loopback and
prints a one-time login URL, as Jupyter does; a token store file and ``--allow-remote``
are both needed to bind anywhere else. The API lives in the ``sessionflow-server``
distribution, imported only by this command.
"""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from sessionflow.kit import FrameworkSpec, read_env
from sessionflow_cli._command_host import open_runtime
from sessionflow_cli._errors import EXIT_OK, UsageError
from sessionflow_cli._flow_types import StartEnvironment
from sessionflow_cli._sessions import new_session_id
from sessionflow_cli.config import CliConfig

if TYPE_CHECKING:
    from sessionflow_server import WebhookConfig

__all__ = [
    "DEFAULT_PORT",
    "INSTALL_HINT",
    "WEBHOOK_SECRET_ENV",
    "ServeRequest",
    "run_serve",
    "webhook_state_path",
]

DEFAULT_PORT = 8765
INSTALL_HINT = 'the HTTP API is not installed: pip install "sessionflow[server]"'
WEBHOOK_SECRET_ENV = "SESSIONFLOW_WEBHOOK_SECRET"


@dataclass(frozen=True, kw_only=True)
class ServeRequest:
    host: str
    port: int
    allow_remote: bool
    token_store: str | None
    issue_token: str | None
    webhook_url: str | None
    trusted_proxies: tuple[str, ...] = ()
    revoke_token: str | None = None
    temporal_ui: str | None = None

    @property
    def token_store_path(self) -> Path | None:
        return Path(self.token_store).expanduser() if self.token_store else None


def _say(console: Console, line: str) -> None:
    console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.file.flush()


def webhook_state_path(token_store: Path) -> Path:
    """Where `serve` keeps webhook cursors and pending deliveries: next to the token store."""
    return token_store.with_name(f"{token_store.stem}.webhooks.json")


def _webhooks(url: str | None, token_store: Path | None) -> WebhookConfig | None:
    from sessionflow_server import WebhookConfig

    if url is None:
        return None
    secret = read_env(WEBHOOK_SECRET_ENV, "")
    state = webhook_state_path(token_store) if token_store is not None else None
    try:
        return WebhookConfig(url=url, secret=secret, state_path=state)
    except ValueError as error:
        raise UsageError(f"--webhook-url: {error} (the secret comes from ${WEBHOOK_SECRET_ENV})") from None


async def run_serve(
    spec: FrameworkSpec,
    config: CliConfig,
    environment: StartEnvironment,
    request: ServeRequest,
    *,
    out: Console,
    info: Console,
) -> int:
    try:
        import sessionflow_server as server
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    try:
        tokens = server.TokenStore(request.token_store_path)
    except server.TokenStoreError as error:
        raise UsageError(str(error)) from None
    if request.issue_token is not None and request.revoke_token is not None:
        raise UsageError("--issue-token and --revoke-token cannot be combined")
    if request.issue_token is not None:
        if request.token_store is None:
            raise UsageError("--issue-token needs --token-store FILE (the token is kept there, hashed)")
        _say(out, tokens.issue(request.issue_token))
        return EXIT_OK
    if request.revoke_token is not None:
        if request.token_store is None:
            raise UsageError("--revoke-token needs --token-store FILE")
        try:
            removed = tokens.revoke(request.revoke_token)
        except server.TokenStoreError as error:
            raise UsageError(str(error)) from None
        _say(out, f"revoked {removed} token{'' if removed == 1 else 's'} of {request.revoke_token}")
        return EXIT_OK
    try:
        server.check_bind(
            request.host, allow_remote=request.allow_remote, token_store_configured=tokens.configured
        )
    except server.BindRefusedError as error:
        raise UsageError(str(error)) from None
    loopback = server.is_loopback(request.host)
    try:
        settings = server.ServerConfig(
            environment=environment.as_record(),
            new_session_id=lambda: new_session_id(spec.name),
            allowed_hosts=server.LOOPBACK_HOSTS if loopback else None,
            webhooks=_webhooks(request.webhook_url, request.token_store_path),
            trusted_proxies=request.trusted_proxies,
            temporal_ui_url=request.temporal_ui,
        )
    except ValueError as error:
        raise UsageError(f"--temporal-ui: {error}") from None
    user = environment.user_name or environment.user_id
    async with open_runtime(spec, config, environment, info=info) as runtime:
        api = server.ApiServer([runtime.sessions], tokens, config=settings)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        try:
            async with server.running_server(api, host=request.host, port=request.port) as running:
                where = f"http://127.0.0.1:{running.port}" if loopback else running.url
                _say(out, f"sessionflow serve: flow type {runtime.flow_type}, API at {where}/api/v1")
                _say(out, f"Open this URL to log in as {user} (it works once, for 10 minutes):")
                _say(out, f"    {where}/#code={api.codes.issue(user)}")
                waiting = asyncio.create_task(stop.wait())
                await asyncio.wait({waiting, running.task}, return_when=asyncio.FIRST_COMPLETED)
                waiting.cancel()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
        _say(out, "sessionflow serve stopped")
    return EXIT_OK
