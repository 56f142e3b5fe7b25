"""The error hierarchy: `SessionError` and its two branches, and the errors of the pure model.

As in Pydantic AI, a mistake of whoever uses the library (`UserError`: configuration,
programming) is told apart from a failure while a session runs (`SessionRunError`). Every
error that sessionflow, an adapter, the command or the server defines sits under one of
the two. The whole tree, with where each error is public:

* SessionError                                  `sessionflow`
  + UserError                                   `sessionflow`: retrying cannot fix it
  | + UnsupportedOptionError                    `sessionflow`
  | | + UnsupportedAgentOptionError             `sessionflow_openai_agents` (also AgentGraphError)
  | + InvalidAnswerError                        `sessionflow`
  | + UnknownSessionError                       `sessionflow`
  | + TurnOutOfRangeError                       `sessionflow`
  | + SessionExistsError                        `sessionflow`
  | + PluginError                               `sessionflow.plugins`
  | | + UnknownFrameworkError                   `sessionflow.plugins`
  | + SearchAttributesMissingError              `sessionflow.temporal`
  | + EncryptionKeyError                        `sessionflow.temporal`
  | + CodecRequestError                         `sessionflow.temporal`
  | + TemporalConfigError                       `sessionflow.temporal` (also ValueError)
  | + CaseFileError                             `sessionflow.testing.conformance`
  | + AgentGraphError                           `sessionflow_openai_agents`
  | + ConfigError                               `sessionflow_cli` (a bad config value, with its JSON Pointer)
  | + UsageError                                `sessionflow_cli` (also CliError)
  | + BindRefusedError                          `sessionflow_server`
  | + TokenStoreError                           `sessionflow_server`
  + SessionRunError                             `sessionflow`: something failed while a session ran
  | + SessionStateError                         `sessionflow`: the state machine does not allow it
  | | + MessageRejectedError                    `sessionflow` (double-texting `reject`)
  | | + SessionStoppedError                     `sessionflow` (a turn awaited on a stopped session)
  | + InvalidToolCallError                      `sessionflow.kit`
  | + TurnAborted                               `sessionflow.kit`
  | + ToolExecutionError                        `sessionflow.kit`
  | + ServerUnreachableError                    `sessionflow`
  | + PayloadStoreError                         `sessionflow`
  | + PayloadDecryptionError                    `sessionflow.temporal`
  | + DevServerError                            `sessionflow.temporal`
  | + ModelHTTPError                            `sessionflow.builtin`
  | + McpUnavailableError, McpTransportError    `sessionflow.mcp`
  | + ClaudeStepError                           `sessionflow_claude_agent_sdk`
  + CliError                                    `sessionflow_cli`: what the command reports
  + ApiError                                    `sessionflow_server`: an HTTP error response

Several also derive from the builtin they refine (`ValueError`, `LookupError`,
`RuntimeError`), so code that caught those before keeps working.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = [
    "InvalidToolCallError",
    "SessionError",
    "SessionRunError",
    "SessionStateError",
    "SessionStoppedError",
    "TurnAborted",
    "UnsupportedOptionError",
    "UserError",
]


class SessionError(Exception):
    """Base of every sessionflow error; `message` holds the text.

    Attributes:
        retryable: Read from the class. False marks an error that a new attempt of the
            durable step cannot fix: a step (model call, tool call) that raises it fails
            at once instead of running again. Subclass and set it to mark your own errors.
    """

    retryable: ClassVar[bool] = True

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UserError(SessionError):
    """A mistake of the program or its configuration, not of the run: retrying cannot fix it."""

    retryable: ClassVar[bool] = False


class UnsupportedOptionError(UserError, ValueError):
    """An option or argument an adapter cannot honour, refused when the flow is built.

    Adapters raise it from their runner's constructor for what is known then, and from a
    step only where a factory hides the option until it runs; either way no attempt of a
    step can fix it. Also a `ValueError`, which adapters raised for such options before.

    Attributes:
        option: Where the option sits, as the user wrote it (``"tools[2]"``, ``"can_use_tool"``).
        why: Why sessionflow cannot honour it, and what to do instead.
    """

    def __init__(self, option: str, why: str) -> None:
        super().__init__(f"option {option!r}: {why}")
        self.option = option
        self.why = why

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickling rebuilds from args, which hold only the message: rebuild from both parts.
        return (type(self), (self.option, self.why))


class SessionRunError(SessionError):
    """Something failed while a session ran: the model, a tool, the server, a store."""


class SessionStateError(SessionRunError):
    """An operation the session's state machine does not allow."""

    retryable: ClassVar[bool] = False


class SessionStoppedError(SessionStateError):
    """The session is stopped: it takes no more messages, so the awaited turn cannot run or end."""

    retryable: ClassVar[bool] = False


class InvalidToolCallError(SessionRunError):
    """A model response asked for tool calls the session cannot record."""

    retryable: ClassVar[bool] = False


class TurnAborted(SessionRunError):
    """Raise from `run_model_step` to fail the turn at once, without retrying the model call.

    For outcomes a retry cannot change, such as a guardrail tripwire. The message becomes
    the turn's `last_turn_error` and the `turn_failed` event's error.
    """

    retryable: ClassVar[bool] = False
