"""`DemoTool.arguments`: the arguments the offline demo sends a framework's own tools."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sessionflow.kit import DemoTool, DemoTour

WORKSPACE = Path("/work/space")


def test_relative_paths_by_default() -> None:
    read = DemoTool(name="read_file", path_argument="path")
    assert read.arguments(WORKSPACE, "notes.md") == {"path": "notes.md"}
    assert read.arguments(WORKSPACE, ".") == {"path": "."}


def test_absolute_paths_join_the_workspace_and_keep_the_fixed_arguments() -> None:
    glob = DemoTool(name="Glob", path_argument="path", fixed_arguments={"pattern": "*"}, absolute_paths=True)
    assert glob.arguments(WORKSPACE, ".") == {"pattern": "*", "path": "/work/space"}
    read = DemoTool(name="Read", path_argument="file_path", absolute_paths=True)
    assert read.arguments(WORKSPACE, "docs/notes.md") == {"file_path": "/work/space/docs/notes.md"}


def test_the_content_goes_only_to_a_tool_that_takes_it() -> None:
    write = DemoTool(name="write_file", path_argument="path", content_argument="content")
    assert write.arguments(WORKSPACE, "a.txt", "hello") == {"path": "a.txt", "content": "hello"}
    assert write.arguments(WORKSPACE, "a.txt", "") == {"path": "a.txt", "content": ""}
    assert write.arguments(WORKSPACE, "a.txt") == {"path": "a.txt"}
    read = DemoTool(name="read_file", path_argument="path")
    assert read.arguments(WORKSPACE, "a.txt", "hello") == {"path": "a.txt"}


def test_the_path_argument_wins_over_a_fixed_argument_of_the_same_name() -> None:
    tool = DemoTool(name="ls", path_argument="path", fixed_arguments={"path": "/elsewhere", "all": True})
    assert tool.arguments(WORKSPACE, "src") == {"path": "src", "all": True}


def test_tools_and_tours_are_immutable_and_keyword_only() -> None:
    # A framework's tour is a module constant that every run shares.
    read = DemoTool(name="read_file", path_argument="path")
    tour = DemoTour(list=read, read=read, write=read)
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.name = "other"  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tour.write = read  # pyright: ignore[reportAttributeAccessIssue]
    with pytest.raises(TypeError):
        DemoTool("read_file", "path")  # pyright: ignore[reportCallIssue]
    with pytest.raises(TypeError):
        DemoTour(read, read, read)  # pyright: ignore[reportCallIssue]
