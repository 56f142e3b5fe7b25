"""The pure session state machine that the durable workflow drives.

Every mutation of session state goes through `SessionModel`, so the rules (legal status
moves, record finality, what a failed turn leaves behind) are tested without an engine.
It holds only plain, serializable values (`SessionFields`) so the workflow can carry it
across continue-as-new unchanged.

The model is assembled from one class per concept, each in its own module; none adds a
field, so the payload stays one flat `SessionFields` object:

- `transcript.Transcript`: the stored messages, their digests and the stored index;
- `inbox.Inbox`: queued user messages, double-texting and retried sends;
- `turn_machine.TurnMachine`: a turn's status moves, from `begin_turn` to its end;
- `spending.Spending`: usage, cost and the budgets checked before each call;
- `tool_call_records.ToolCallRecords`: the running turn's tool call records;
- `interrupts.Interrupts`: calls waiting for a person, and their answers;
- `memory_tools.MemoryTools`: guarded memory's tools, run inside the session;
- `reads.Reads`: the snapshot and message pages queries answer with.
"""

from __future__ import annotations

from sessionflow.session.inbox import Inbox
from sessionflow.session.memory_tools import MemoryTools
from sessionflow.session.reads import Reads
from sessionflow.session.turn_machine import TurnMachine

__all__ = ["SessionModel"]


class SessionModel(TurnMachine, Inbox, MemoryTools, Reads):
    """All durable state of one session, and every rule that changes it."""
