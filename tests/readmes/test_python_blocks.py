"""Every ```python block of every README runs as written, as its own script.

Blocks come from README.md and packages/*/README.md. A block that is deliberately a
fragment (an API shape, a continuation of an earlier block) has ``<!-- fragment -->``
on the line before it and is left out; nothing else is. Each block runs in a fresh
interpreter against this run's Temporal dev server (``SESSIONFLOW_SERVER_ADDRESS``, and
``TEMPORAL_ADDRESS`` for a block that reads Temporal's own configuration) and the
scripted model server: every provider variable points at it (OpenAI, Anthropic and Gemini
base URLs and keys), and it answers any request that has no script with a short text reply,
so a snippet that starts a real turn finishes it offline. No block names a test helper.

A block that runs a turn and prints its answer has ``<!-- expect: TEXT -->`` on the line
before it: its output must then hold TEXT, the scripted model's reply (`REPLY`), so a
program that exits 0 without the answer fails. Every adapter README's first program
carries one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sessionflow.demo import ModelReply, RecordedRequest, ScriptedModelServer
from tests.examples import finalization_abort, run_example

REPO = Path(__file__).parents[2]
FRAGMENT = "<!-- fragment -->"
REPLY = "Done."
"""What the scripted model answers every request of a block."""
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)
_EXPECT = re.compile(r"^<!-- expect: (.+?) -->$")


@dataclass(frozen=True)
class Block:
    readme: Path
    line: int
    code: str
    fragment: bool
    expect: str | None = None
    """Text the block's output must hold (``<!-- expect: ... -->``)."""

    @property
    def id(self) -> str:
        return f"{self.readme.relative_to(REPO)}:{self.line}"


def readme_blocks() -> list[Block]:
    blocks: list[Block] = []
    for readme in [REPO / "README.md", *sorted(REPO.glob("packages/*/README.md"))]:
        blocks.extend(blocks_of(readme, readme.read_text()))
    return blocks


def blocks_of(readme: Path, text: str) -> list[Block]:
    blocks: list[Block] = []
    for match in _BLOCK.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        line = text.count("\n", 0, match.start()) + 1
        expect = _EXPECT.match(before)
        blocks.append(
            Block(
                readme,
                line,
                match.group(1),
                fragment=before == FRAGMENT,
                expect=expect.group(1) if expect else None,
            )
        )
    return blocks


BLOCKS = readme_blocks()


@pytest.fixture(scope="module")
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


def _answer(request: RecordedRequest) -> ModelReply:
    return ModelReply.say(REPLY)


def test_the_blocks_are_found() -> None:
    # Every README with code has blocks here, and the marker is the only way out.
    assert {b.readme.parent.name for b in BLOCKS} >= {"adapter-claude", "adapter-openai", "adapter-langgraph"}
    assert any(b.fragment for b in BLOCKS) and any(not b.fragment for b in BLOCKS)


FIRST_PROGRAMS = (
    "adapter-openai",
    "adapter-pydantic-ai",
    "adapter-langgraph",
    "adapter-claude",
    "adapter-google-adk",
    "core",
)


@pytest.mark.parametrize("package", FIRST_PROGRAMS)
def test_the_first_program_prints_the_answer(package: str) -> None:
    # The first program of each of these READMEs runs a turn, and its output is checked
    # for the model's answer, not only its exit code.
    first = next(b for b in BLOCKS if b.readme.parent.name == package and not b.fragment)
    assert first.expect == REPLY, f"{first.id}: mark it <!-- expect: {REPLY} -->"
    assert "run_turn(" in first.code and "print(" in first.code, first.id


def test_an_expect_marker_is_read() -> None:
    text = f"<!-- expect: {REPLY} -->\n```python\nprint(1)\n```\n\n```python\nprint(2)\n```\n"
    marked, plain = blocks_of(REPO / "README.md", text)
    assert (marked.expect, marked.code, plain.expect) == (REPLY, "print(1)\n", None)


@pytest.mark.parametrize("block", [b for b in BLOCKS if not b.fragment], ids=lambda b: b.id)
async def test_the_block_runs_as_written(
    block: Block, tmp_path: Path, temporal_address: str, model_server: ScriptedModelServer
) -> None:
    key = block.id
    model_server.respond(key, _answer)
    script = tmp_path / "block.py"
    script.write_text(block.code)
    env = {
        "SESSIONFLOW_SERVER_ADDRESS": temporal_address,
        # A block written as a Temporal user writes it reads Temporal's own configuration.
        "TEMPORAL_ADDRESS": temporal_address,
        "TEMPORAL_NAMESPACE": "default",
        "OPENAI_BASE_URL": model_server.base_url(key),
        "OPENAI_API_KEY": "unused",
        "ANTHROPIC_BASE_URL": model_server.base_url(key, api="anthropic"),
        "ANTHROPIC_API_KEY": "unused",
        # google-genai (Google ADK's Gemini model) reads its base URL and key from these.
        "GOOGLE_GEMINI_BASE_URL": model_server.base_url(key, api="gemini"),
        "GOOGLE_API_KEY": "unused",
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
    }
    try:
        output = await run_example(script, env=env, timeout=180)
    finally:
        model_server.respond(key, None)
    if block.expect is not None:
        assert block.expect in output, f"{key}: the output lacks {block.expect!r}:\n{output}"


def test_only_the_upstream_finalization_abort_is_forgiven() -> None:
    abort = (
        "Done.\nFatal Python error: PyGILState_Release: thread state 0x1 must be current when releasing\n"
        "Python runtime state: finalizing (tstate=0x2)\n"
    )
    assert finalization_abort(-6, abort)
    assert not finalization_abort(1, abort)  # an exit code, not the abort
    assert not finalization_abort(-6, "Traceback (most recent call last):\n" + abort)
    assert not finalization_abort(-6, abort.replace("finalizing", "initialized"))  # mid-run
    assert not finalization_abort(-9, "Done.\n")
