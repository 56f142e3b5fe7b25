"""Errors that end the command, each with the exit code it stands for."""

from __future__ import annotations

from sessionflow import SessionError, SessionRunError, UserError

__all__ = [
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "CliError",
    "RuntimeFailure",
    "UsageError",
]

EXIT_OK = 0
EXIT_FAILURE = 1
"""A failure at run time: a server that does not start, a foreign service on our port, a failed turn."""
EXIT_USAGE = 2
"""A usage or configuration error."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (SIGINT) ended the command: 128 + the signal's number, as a shell reports it."""


class CliError(SessionError):
    """Stops the command: `message` goes to standard error and `exit_code` to the shell."""

    exit_code = EXIT_FAILURE


class UsageError(CliError, UserError):
    """Bad arguments, a rejected configuration, or a session the command may not continue."""

    exit_code = EXIT_USAGE


class RuntimeFailure(CliError, SessionRunError):
    """Something failed while the command ran."""

    exit_code = EXIT_FAILURE
