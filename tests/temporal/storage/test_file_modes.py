"""Files only their owner can read: the payload store's folders 0700 and objects 0600, the
server's token store 0600, and looser ones found at start tightened."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessionflow.home import private_dir, tighten_home
from sessionflow.temporal import PayloadStore, build_data_converter
from sessionflow_server import TokenStore


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    """The usual 022: without sessionflow's own modes, folders would be 0755 and files 0644."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


async def test_the_payload_store_writes_private_folders_and_objects(tmp_path: Path) -> None:
    root = tmp_path / "home" / ".sessionflow" / "payloads"
    store = PayloadStore(location=str(root), threshold=0)
    await store.probe()
    converter = build_data_converter(store, codec=None)
    payloads = await converter.encode(["a conversation", {"secret": 1}])
    assert await converter.decode(payloads) == ["a conversation", {"secret": 1}]
    files = [p for p in root.rglob("*") if p.is_file()]
    folders = [root, *(p for p in root.rglob("*") if p.is_dir())]
    assert len(files) >= 2 and len(folders) >= 3
    assert {path: _mode(path) for path in files} == dict.fromkeys(files, 0o600)
    assert {path: _mode(path) for path in folders} == dict.fromkeys(folders, 0o700)
    # The parents it had to create are private too (a fresh HOME: .sessionflow did not exist).
    assert _mode(root.parent) == 0o700
    assert _mode(tmp_path / "home") == 0o700


async def test_a_store_folder_left_0755_is_tightened_at_probe_and_at_the_next_write(tmp_path: Path) -> None:
    root = tmp_path / "payloads"
    store = PayloadStore(location=str(root), threshold=0)
    converter = build_data_converter(store, codec=None)
    await converter.encode(["first"])
    subfolders = [p for p in root.rglob("*") if p.is_dir()]
    for folder in [root, *subfolders]:
        folder.chmod(0o755)
    await store.probe()
    assert _mode(root) == 0o700
    before = {p for p in root.rglob("*") if p.is_file()}
    await converter.encode(["second"])  # the same session's folder: those on its way are tightened
    [written] = {p for p in root.rglob("*") if p.is_file()} - before
    on_the_way = [folder for folder in written.parents if folder.is_relative_to(root)]
    assert len(on_the_way) >= 3 and set(on_the_way) & set(subfolders)
    assert {p: _mode(p) for p in on_the_way} == dict.fromkeys(on_the_way, 0o700)
    assert _mode(written) == 0o600


def test_the_token_store_is_0600_in_a_0700_folder_and_an_old_0644_file_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "created" / "tokens.json"
    store = TokenStore(path)
    token = store.issue("ana")
    assert _mode(path) == 0o600
    assert _mode(path.parent) == 0o700  # created by it
    path.chmod(0o644)
    reread = TokenStore(path)
    assert reread.user_of(token) == "ana"
    assert _mode(path) == 0o600
    # A folder the operator named and that was there already is left as it is.
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    TokenStore(shared / "tokens.json").issue("bo")
    assert _mode(shared) == 0o755
    assert _mode(shared / "tokens.json") == 0o600


def test_tighten_home_makes_the_folder_and_its_contents_private(tmp_path: Path) -> None:
    home = tmp_path / ".sessionflow"
    (home / "server").mkdir(parents=True)
    (home / "payloads" / "default").mkdir(parents=True)
    for folder in (home, home / "server", home / "payloads", home / "payloads" / "default"):
        folder.chmod(0o755)
    files = [home / "builtin.yaml", home / "codec-token", home / "server" / "temporal.sqlite"]
    for file in files:
        file.write_text("x")
        file.chmod(0o644)
    link_target = tmp_path / "elsewhere"
    link_target.write_text("y")
    link_target.chmod(0o644)
    (home / "link").symlink_to(link_target)
    tighten_home(home)
    assert _mode(home) == 0o700
    for folder in (home / "server", home / "payloads", home / "payloads" / "default"):
        assert _mode(folder) == 0o700, folder
    assert {f: _mode(f) for f in files} == dict.fromkeys(files, 0o600)
    assert _mode(link_target) == 0o644  # a link is not followed out of the folder
    # Executable bits are kept (only group and other lose theirs).
    script = home / "hook.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    tighten_home(home)
    assert _mode(script) == 0o700


def test_private_dir_creates_missing_parents_0700_and_leaves_folders_above_root(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    root = tmp_path / "store"
    root.mkdir(mode=0o755)
    root.chmod(0o755)
    private_dir(root / "ns" / "session", root=root)
    assert _mode(tmp_path) == 0o755
    assert _mode(root) == 0o700
    assert _mode(root / "ns") == 0o700
    assert _mode(root / "ns" / "session") == 0o700


def test_saved_media_is_0600_in_folders_it_creates_0700(tmp_path: Path) -> None:
    from sessionflow.mcp._results import save_media

    media = tmp_path / "home" / ".sessionflow" / "media"
    path = save_media(media, b"\x89PNG\r\n\x1a\n-an-image", "image/png")
    assert _mode(path) == 0o600
    assert _mode(media) == 0o700
    assert _mode(media.parent) == 0o700
