"""The pure session model: records, statuses, policies and the turn state machine. No I/O.

Each module here is the one home of what it defines. Nothing is re-exported from this
package: applications import from `sessionflow`, adapter authors from `sessionflow.kit`,
and the engine binding from the defining module.
"""
