"""The file `init` writes: the defaults, with a comment on every key."""

from __future__ import annotations

from typing import Any

from sessionflow_cli.config._yaml import parse_document

__all__ = ["default_document", "default_text"]

_TEMPLATE = """\
# sessionflow configuration of the {framework} framework.
# Every key is optional; `sessionflow init --print-schema` prints the schema.

# The model, as the framework names it. "demo" is the offline scripted demo model.
model: demo
# Other models that a message's session settings may switch to.
models: []
# Instructions for the agent, or a file of them next to this one:
# system_prompt: You are a careful assistant.
# system_prompt_file: prompt.md
# The folder the local tools work in, relative to the current directory.
workspace: .
# "auto" reuses or starts the embedded Temporal dev server (server/ in the data folder),
# unless $SESSIONFLOW_SERVER_ADDRESS or Temporal's configuration ($TEMPORAL_ADDRESS,
# a temporal.toml profile) names a server (docs/production/connecting.md).
# Otherwise host:port, or a mapping with address, namespace, tls and api_key_env.
server: auto
local_tools:
  files: true
  shell:
    enabled: true
    # Whole command texts that run without approval, such as "git status".
    allow: []
    timeout: 120
  web_fetch: true
  browser: false
# MCP servers: {{name, command, args}} or {{name, url, headers}}; `enabled` picks tools.
connectors: []
approval:
  # Tools that wait for approval on every call.
  always: []
# Where images attached with /image are kept: by default media/ in sessionflow's data
# folder (~/.sessionflow/media, or under $SESSIONFLOW_HOME or $XDG_DATA_HOME).
media:
  # folder: ~/pictures/sessionflow
# The framework's own settings.
{framework}: {{}}
"""


def default_text(framework: str) -> str:
    return _TEMPLATE.format(framework=framework)


def default_document(framework: str) -> Any:
    """A fresh round-trip document of the defaults, ready to change and write."""
    return parse_document(default_text(framework), source="<defaults>")
