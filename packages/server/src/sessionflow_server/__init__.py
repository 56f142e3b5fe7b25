"""The HTTP API of sessionflow: sessions, approvals and live events over JSON and SSE.

`ApiServer(flows, tokens)` builds the ASGI app (`.app`) for one or more flows'
`AgentSessionClient`s; `running_server` serves it with uvicorn; `sessionflow serve` does
both for the command's configured flow. See docs/server/api.md.
"""

from sessionflow_server._app import ApiServer
from sessionflow_server._config import DEFAULT_MAX_BODY_BYTES, ServerConfig, default_session_id
from sessionflow_server._openapi import OPENAPI_PATH, openapi_document
from sessionflow_server._routes import API_PREFIX, ROUTES, ApiRoute
from sessionflow_server._serve import (
    LOOPBACK_HOSTS,
    BindRefusedError,
    RunningServer,
    check_bind,
    is_loopback,
    running_server,
)
from sessionflow_server._tokens import (
    LOGIN_CODE_LIFETIME,
    LoginCodes,
    TokenStore,
    TokenStoreError,
    hash_token,
)
from sessionflow_server._webhooks import (
    SIGNATURE_HEADER,
    TIMESTAMP_TOLERANCE,
    SessionWatcher,
    WebhookConfig,
    WebhookSender,
    sign,
    signing_key,
    standard_signature,
)

__all__ = [
    "API_PREFIX",
    "DEFAULT_MAX_BODY_BYTES",
    "LOGIN_CODE_LIFETIME",
    "LOOPBACK_HOSTS",
    "OPENAPI_PATH",
    "ROUTES",
    "SIGNATURE_HEADER",
    "TIMESTAMP_TOLERANCE",
    "ApiRoute",
    "ApiServer",
    "BindRefusedError",
    "LoginCodes",
    "RunningServer",
    "ServerConfig",
    "SessionWatcher",
    "TokenStore",
    "TokenStoreError",
    "WebhookConfig",
    "WebhookSender",
    "check_bind",
    "default_session_id",
    "hash_token",
    "is_loopback",
    "openapi_document",
    "running_server",
    "sign",
    "signing_key",
    "standard_signature",
]
