"""The session workflow: one execution per session, driving the pure session model.

Its modules are private; operators reach replay through `sessionflow.temporal`.
"""
