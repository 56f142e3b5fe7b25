"""Serving flows: workers, their shutdown, model call limits, deployments and upgrades.

`serve_agent_flows` is public in `sessionflow`; the rest in `sessionflow.temporal`. The
modules are private.
"""
