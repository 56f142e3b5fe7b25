"""A test plugin: the built-in runner plus two tools of its own, as frameworks `scripted`,
`scripted-text` (no images) and `scripted-fs` (its tools replace the CLI's `files` group),
and `scripted-gated`, which adds `wait_at_gate`: a read that appends its worker's pid to
``gate-runs.txt`` in the workspace, then waits at the `FileGate` of ``<workspace>/.gates``.

The command finds it through ``SESSIONFLOW_LOAD_PLUGINS=tests.cli.scripted_plugin``. The
model is the scripted model server at ``OPENAI_BASE_URL``. `publish_note` is a write that
waits for approval by default and appends to ``published.txt`` in the workspace.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from sessionflow import ToolEffect
from sessionflow.builtin import ChatCompletionsRunner, tool
from sessionflow.kit import FrameworkCapabilities, FrameworkSpec, HarnessContext, ToolSpec, hookimpl
from sessionflow.testing import FileGate


def _gated_runner(ctx: HarnessContext) -> ChatCompletionsRunner:
    async def wait_at_gate(name: str) -> str:
        """Wait until the test opens the gate."""
        with (ctx.workspace / "gate-runs.txt").open("a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
        await FileGate(ctx.workspace / ".gates", name).wait_for_release()
        return f"gate {name} opened"

    return _runner(ctx, extra=[tool(wait_at_gate, effect=ToolEffect.READ)])


def _runner(ctx: HarnessContext, extra: list[ToolSpec] | None = None) -> ChatCompletionsRunner:
    def publish_note(text: str) -> str:
        """Publish a note for everyone to read."""
        with (ctx.workspace / "published.txt").open("a", encoding="utf-8") as handle:
            handle.write(text + "\n")
        return f"published {text!r}"

    def lookup(query: str) -> str:
        """Look something up."""
        if query.startswith("print:"):  # a tool that writes to the process's standard output
            print(query.removeprefix("print:"), flush=True)
        return f"looked up {query}"

    own = [tool(publish_note, effect=ToolEffect.NON_IDEMPOTENT_WRITE), tool(lookup, effect=ToolEffect.READ)]
    tools = [*ctx.tools, *(own if ctx.framework_tools else ()), *(extra or ())]
    return ChatCompletionsRunner(
        model=ctx.model,
        tools=tools,
        system_prompt=ctx.system_prompt,
        base_url=ctx.model_base_url,
        api_key="test",
    )


@hookimpl
def sessionflow_register_frameworks(register: Callable[[FrameworkSpec], None]) -> None:
    for name, images, replaced in (
        ("scripted", True, frozenset[str]()),
        ("scripted-text", False, frozenset[str]()),
        ("scripted-fs", True, frozenset({"files"})),
        ("scripted-gated", True, frozenset[str]()),
    ):
        register(
            FrameworkSpec(
                name=name,
                description=f"The built-in runner with test tools (images: {images})"
                + (f", replacing the local tool groups {', '.join(sorted(replaced))}" if replaced else ""),
                capabilities=FrameworkCapabilities(
                    parallel_tool_calls=True,
                    reasoning_deltas=False,
                    images=images,
                    mcp_annotations=False,
                    steering=name != "scripted-text",
                ),
                build_runner=_gated_runner if name == "scripted-gated" else _runner,
                model_api="chat_completions",
                replaced_local_tool_groups=replaced,
            )
        )
