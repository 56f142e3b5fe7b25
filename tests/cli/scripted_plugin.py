"""A test plugin: the built-in runner plus two tools of its own, as frameworks `scripted`,
`scripted-text` (no images) and `scripted-fs` (its tools replace the CLI's `files` group).

The command finds it through ``SESSIONFLOW_LOAD_PLUGINS=tests.cli.scripted_plugin``. The
model is the scripted model server at ``OPENAI_BASE_URL``. `publish_note` is a write that
waits for approval by default and appends to ``published.txt`` in the workspace.
"""

from __future__ import annotations

from collections.abc import Callable

from sessionflow import ToolEffect
from sessionflow.builtin import ChatCompletionsRunner, tool
from sessionflow.kit import FrameworkCapabilities, FrameworkSpec, HarnessContext, hookimpl


def _runner(ctx: HarnessContext) -> ChatCompletionsRunner:
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
    tools = [*ctx.tools, *(own if ctx.framework_tools else ())]
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
    ):
        register(
            FrameworkSpec(
                name=name,
                description=f"The built-in runner with test tools (images: {images})"
                + (f", replacing the local tool groups {', '.join(sorted(replaced))}" if replaced else ""),
                capabilities=FrameworkCapabilities(
                    parallel_tool_calls=True, reasoning_deltas=False, images=images, mcp_annotations=False
                ),
                build_runner=_runner,
                model_api="chat_completions",
                replaced_local_tool_groups=replaced,
            )
        )
