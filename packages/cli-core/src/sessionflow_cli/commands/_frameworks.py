"""`sessionflow frameworks`: the frameworks found through entry points, with their capabilities.

`--json` prints a list for scripts: ``[{"name", "description", "model_api", "plugin",
"capabilities": {<capability>: <value>}}]``, sorted by name.
"""

from __future__ import annotations

import dataclasses
import json

from rich.console import Console
from rich.text import Text

from sessionflow_cli._errors import EXIT_OK
from sessionflow_cli._frameworks import all_frameworks

__all__ = ["run_frameworks"]


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def run_frameworks(out: Console, *, as_json: bool = False) -> int:
    frameworks = all_frameworks()
    if as_json:
        listed = [
            {
                "name": name,
                "description": spec.description,
                "model_api": spec.model_api,
                "plugin": spec.plugin_name,
                "capabilities": dataclasses.asdict(spec.capabilities),
            }
            for name, spec in sorted(frameworks.items())
        ]
        out.file.write(json.dumps(listed, ensure_ascii=False, indent=2, default=str) + "\n")
        return EXIT_OK
    for name, spec in sorted(frameworks.items()):
        caps = spec.capabilities
        head = Text()
        head.append(name, style="bold")
        head.append(f"  {spec.description}")
        out.print(head, soft_wrap=True)
        out.print(
            f"  model API {spec.model_api}; images {_yes(caps.images)}; parallel tool calls "
            f"{_yes(caps.parallel_tool_calls)}; reasoning deltas {_yes(caps.reasoning_deltas)}; "
            f"MCP annotations {_yes(caps.mcp_annotations)}; continue steps {_yes(caps.continue_steps)}; "
            f"carry state {_yes(caps.carry_state)}; "
            f"tool state {_yes(caps.tool_state)}; "
            f"framework approvals {_yes(caps.framework_approvals)}; questions {_yes(caps.questions)}; "
            f"verified outcomes {_yes(caps.verified_outcomes)}; "
            f"plugin {spec.plugin_name}",
            soft_wrap=True,
            highlight=False,
        )
    out.print(f"{len(frameworks)} frameworks; pick one with -f/--framework.", highlight=False)
    return EXIT_OK
