"""Symbolic links and the workspace: reads follow them inside, writes never go through one.

ci/mutants found these held by no test: `write_file` following a link at the last
component (`follow_last=False` changed to True) passed every test of this folder.
"""

from __future__ import annotations

import os

from tests.local_tools.conftest import SENTINEL_TEXT, Sandbox
from tests.local_tools.test_bad_inputs import refused

_NO_WRITE_THROUGH = "is a symbolic link; this tool does not write through links"


async def test_write_file_refuses_a_link_at_the_last_component(sandbox: Sandbox) -> None:
    (sandbox.ws / "real.txt").write_text("original\n")
    os.symlink("real.txt", sandbox.ws / "link.txt")
    message = await refused(sandbox.tools, "write_file", path="link.txt", content="replaced\n")
    assert message == f"'link.txt' {_NO_WRITE_THROUGH}"
    assert (sandbox.ws / "real.txt").read_text() == "original\n"
    assert os.readlink(sandbox.ws / "link.txt") == "real.txt"


async def test_edit_file_refuses_a_link_at_the_last_component(sandbox: Sandbox) -> None:
    (sandbox.ws / "real.txt").write_text("original\n")
    os.symlink("real.txt", sandbox.ws / "link.txt")
    message = await refused(
        sandbox.tools, "edit_file", path="link.txt", old_string="original", new_string="x"
    )
    assert message == f"'link.txt' {_NO_WRITE_THROUGH}"
    assert (sandbox.ws / "real.txt").read_text() == "original\n"


async def test_a_dangling_link_is_not_a_new_file_for_write_file(sandbox: Sandbox) -> None:
    os.symlink("missing.txt", sandbox.ws / "dangling.txt")
    message = await refused(sandbox.tools, "write_file", path="dangling.txt", content="x")
    assert message == f"'dangling.txt' {_NO_WRITE_THROUGH}"
    assert not (sandbox.ws / "missing.txt").exists()


async def test_writes_go_through_a_linked_directory_on_the_way(sandbox: Sandbox) -> None:
    (sandbox.ws / "dir").mkdir()
    os.symlink("dir", sandbox.ws / "alias")
    result = await sandbox.tools.call("write_file", path="alias/new.txt", content="hi\n")
    assert result == "Wrote 3 bytes to dir/new.txt (created)."
    assert (sandbox.ws / "dir" / "new.txt").read_text() == "hi\n"


async def test_reads_follow_links_inside_the_workspace(sandbox: Sandbox) -> None:
    (sandbox.ws / "real.txt").write_text("content\n")
    os.symlink("real.txt", sandbox.ws / "link.txt")
    os.symlink(str(sandbox.ws / "real.txt"), sandbox.ws / "absolute.txt")
    os.symlink("link.txt", sandbox.ws / "chain.txt")
    for path in ("link.txt", "absolute.txt", "chain.txt"):
        assert await sandbox.tools.call("read_file", path=path) == "content\n"


async def test_links_that_leave_the_workspace_are_refused(sandbox: Sandbox) -> None:
    os.symlink(str(sandbox.sentinel), sandbox.ws / "out.txt")
    os.symlink(f"../{sandbox.sentinel.name}", sandbox.ws / "up.txt")
    for path in ("out.txt", "up.txt"):
        message = await refused(sandbox.tools, "read_file", path=path)
        assert SENTINEL_TEXT not in message
        assert "outside the workspace" in message or "above the workspace" in message
    assert await refused(sandbox.tools, "read_file", path="out.txt") == (
        "'out.txt' leads through a symbolic link that points outside the workspace"
    )
    assert await refused(sandbox.tools, "read_file", path="up.txt") == (
        "'up.txt' leads through a symbolic link that climbs above the workspace"
    )
    assert await refused(sandbox.tools, "read_file", path="../x") == "'../x' climbs above the workspace"


async def test_a_loop_of_links_is_refused(sandbox: Sandbox) -> None:
    os.symlink("b", sandbox.ws / "a")
    os.symlink("a", sandbox.ws / "b")
    assert await refused(sandbox.tools, "read_file", path="a") == "'a': too many symbolic links (a loop?)"
