"""The activities: where a runner is called, one kind of step at a time.

One class per kind of step (`_model_step`, `_tool_step`, `_verify_step`,
`_user_message_step`), sharing a `_step_context`; the model step reads messages through
`_message_cache`. Telemetry, provider retry delays and the worker's model call limits
have their own modules. The modules are private.
"""
