"""``python -m sessionflow_cli``: the same as the `sessionflow` command."""

from sessionflow_cli import main

main()
