"""The verify of the local tools' file writes: `write_file` by content hash, `edit_file` by before/after hashes.

The hashes come from `_verify` (`write_basis`/`edit_basis` when the call is deferred,
`verify_write`/`verify_edit` after a step that died); this module maps the tools'
arguments onto them. Other local tools have no verify.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sessionflow.kit import ToolVerifier, ToolVerifyBasis, VerifyCall, VerifyResult
from sessionflow_local_tools import _verify as runtime
from sessionflow_local_tools._args import Arguments

__all__ = ["verify_hooks"]


def verify_hooks(
    name: str, workspace: Path, known: frozenset[str]
) -> tuple[ToolVerifier | None, ToolVerifyBasis | None]:
    """The verify and the deferral basis of the local tool ``name``; (None, None) for the others."""
    if name == "write_file":

        async def write_basis(arguments: dict[str, Any]) -> str | None:
            return await runtime.write_basis(workspace, Arguments(arguments, known).text("path"))

        async def verify_write(arguments: dict[str, Any], call: VerifyCall) -> VerifyResult:
            a = Arguments(arguments, known)
            return await runtime.verify_write(workspace, a.text("path"), a.text("content"), call.basis)

        return verify_write, write_basis
    if name == "edit_file":

        async def edit_basis(arguments: dict[str, Any]) -> str | None:
            a = Arguments(arguments, known)
            return await runtime.edit_basis(
                workspace,
                a.text("path"),
                a.text("old_string"),
                a.text("new_string"),
                replace_all=a.flag("replace_all"),
            )

        async def verify_edit(arguments: dict[str, Any], call: VerifyCall) -> VerifyResult:
            return await runtime.verify_edit(workspace, Arguments(arguments, known).text("path"), call.basis)

        return verify_edit, edit_basis
    return None, None
