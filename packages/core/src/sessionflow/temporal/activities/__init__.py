"""The activities: where a runner is called, one kind of step at a time.

Model steps, tool steps and verify steps run here, with their telemetry, provider retry
delays and the worker's model call limits. The modules are private.
"""
