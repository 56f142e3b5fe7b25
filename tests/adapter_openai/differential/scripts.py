"""Model scripts several tests share."""

from __future__ import annotations

from sessionflow.demo import ModelReply, ScriptedToolCall

__all__ = ["TOKYO", "TOKYO_WEATHER"]

TOKYO = "What's the weather in Tokyo?"
TOKYO_WEATHER = [
    ModelReply.call(ScriptedToolCall("call_tokyo", "get_weather", {"city": "Tokyo"})),
    ModelReply.say("The weather in Tokyo is sunny with wind."),
]
