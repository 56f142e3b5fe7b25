"""The client side: connecting, starting and talking to sessions, and reading them back.

`AgentSessionClient` and `connect` are public in `sessionflow`; listing sessions, probes
and step history in `sessionflow.temporal`. The modules are private.
"""
