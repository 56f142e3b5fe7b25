"""`write_file` and `edit_file` verify their outcome by hashes: the specs the CLI offers, on real files.

The basis is taken as the session takes it (when the call is deferred), the write runs
(or does not), then the verify looks at the file. The SIGKILLs that make the session ask
are in test_verify_sigkill.py.
"""

from __future__ import annotations

import json
import os
from typing import Any

from sessionflow.kit import EffectUnknown, NoEffect, TookEffect, VerifyCall, VerifyResult
from tests.local_tools.conftest import Sandbox, Tools


async def _basis(tools: Tools, tool: str, **args: Any) -> str | None:
    return await tools.specs[tool].deferral_basis(dict(args))


async def _verify(tools: Tools, tool: str, basis: str | None, **args: Any) -> VerifyResult:
    call = VerifyCall(
        tool_call_id="c1", idempotency_key="s/turn-1/c1", attempt=1, tool_name=tool, basis=basis
    )
    return await tools.specs[tool].run_verify(dict(args), call)


def test_only_the_two_writes_have_a_verify(sandbox: Sandbox) -> None:
    verifiable = {name for name, spec in sandbox.tools.specs.items() if spec.verify is not None}
    assert verifiable == {"write_file", "edit_file"}


async def test_write_file_that_took_effect_is_verified_by_the_content_hash(sandbox: Sandbox) -> None:
    tools = sandbox.tools
    args: dict[str, Any] = {"path": "out/new.txt", "content": "hello\n"}
    basis = await _basis(tools, "write_file", **args)
    assert basis is not None and json.loads(basis) == {"before": None}
    await tools.call("write_file", **args)
    assert await _verify(tools, "write_file", basis, **args) == TookEffect(
        output="Wrote 6 bytes to out/new.txt (verified: the file holds exactly this content)."
    )


async def test_write_file_that_never_landed_failed(sandbox: Sandbox) -> None:
    tools = sandbox.tools
    (sandbox.ws / "a.txt").write_text("old\n")
    args = {"path": "a.txt", "content": "new\n"}
    basis = await _basis(tools, "write_file", **args)
    assert await _verify(tools, "write_file", basis, **args) == NoEffect(
        message="the write did not take effect: a.txt is as it was before the call"
    )
    absent = {"path": "b.txt", "content": "x"}
    assert await _verify(
        tools, "write_file", await _basis(tools, "write_file", **absent), **absent
    ) == NoEffect(message="the write did not take effect: b.txt is still absent")


async def test_write_file_overwritten_by_someone_else_is_unknown_not_failed(sandbox: Sandbox) -> None:
    tools = sandbox.tools
    (sandbox.ws / "a.txt").write_text("old\n")
    args = {"path": "a.txt", "content": "ours\n"}
    basis = await _basis(tools, "write_file", **args)
    (sandbox.ws / "a.txt").write_text("theirs\n")
    result = await _verify(tools, "write_file", basis, **args)
    assert isinstance(result, EffectUnknown)
    assert "neither what the call wrote nor what it held before" in result.reason


async def test_write_file_that_cannot_be_read_is_unknown(sandbox: Sandbox) -> None:
    tools = sandbox.tools
    args = {"path": "d", "content": "x"}
    basis = await _basis(tools, "write_file", **args)
    (sandbox.ws / "d").mkdir()
    result = await _verify(tools, "write_file", basis, **args)
    assert isinstance(result, EffectUnknown) and "cannot be read to check it" in result.reason


async def test_write_file_without_a_basis_still_knows_its_own_content_and_an_absent_file(
    sandbox: Sandbox,
) -> None:
    tools = sandbox.tools
    (sandbox.ws / "a.txt").write_text("ours")
    assert isinstance(await _verify(tools, "write_file", None, path="a.txt", content="ours"), TookEffect)
    assert isinstance(await _verify(tools, "write_file", None, path="gone.txt", content="x"), NoEffect)
    assert isinstance(await _verify(tools, "write_file", None, path="a.txt", content="other"), EffectUnknown)


async def test_edit_file_is_verified_by_the_hashes_before_and_after(sandbox: Sandbox) -> None:
    tools = sandbox.tools
    (sandbox.ws / "code.py").write_text("x = 1\ny = 2\n")
    args: dict[str, Any] = {"path": "code.py", "old_string": "x = 1", "new_string": "x = 10"}
    basis = await _basis(tools, "edit_file", **args)
    assert basis is not None and set(json.loads(basis)) == {"before", "after"}
    assert await _verify(tools, "edit_file", basis, **args) == NoEffect(
        message="the edit was not applied: code.py is unchanged"
    )
    await tools.call("edit_file", **args)
    assert (sandbox.ws / "code.py").read_text() == "x = 10\ny = 2\n"
    assert await _verify(tools, "edit_file", basis, **args) == TookEffect(
        output="Edited code.py (verified: the file holds the edited content)."
    )


async def test_edit_file_on_a_file_changed_since_is_unknown(sandbox: Sandbox) -> None:
    tools = sandbox.tools
    path = sandbox.ws / "code.py"
    path.write_text("x = 1\n")
    args = {"path": "code.py", "old_string": "x = 1", "new_string": "x = 2"}
    basis = await _basis(tools, "edit_file", **args)
    path.write_text("x = 1\n# someone else\n")
    changed = await _verify(tools, "edit_file", basis, **args)
    assert isinstance(changed, EffectUnknown) and "holds neither" in changed.reason
    os.unlink(path)
    gone = await _verify(tools, "edit_file", basis, **args)
    assert isinstance(gone, EffectUnknown) and "no longer exists" in gone.reason


async def test_an_edit_that_could_not_apply_records_no_basis_and_verifies_unknown(sandbox: Sandbox) -> None:
    tools = sandbox.tools
    (sandbox.ws / "code.py").write_text("a a\n")
    assert await _basis(tools, "edit_file", path="code.py", old_string="zzz", new_string="y") is None
    assert await _basis(tools, "edit_file", path="code.py", old_string="a", new_string="b") is None  # twice
    assert await _basis(tools, "edit_file", path="missing.py", old_string="a", new_string="b") is None
    assert await _basis(tools, "edit_file", path="code.py", old_string="a", new_string="b", replace_all=True)
    result = await _verify(tools, "edit_file", None, path="code.py", old_string="a", new_string="b")
    assert isinstance(result, EffectUnknown) and "no hashes" in result.reason
