"""Agents from Pydantic AI's output docs, as builders for both runs of the differential tests.

Copied from pydantic/pydantic-ai at commit 4fda38988f2939fa6ea9cdefcf120693e10ef491,
``docs/output.md``: box_or_error.py, colors_or_sizes.py, tool_output.py, native_output.py,
prompted_output.py, text_output_function.py and streamed_user_profile.py, with the same
output types, instructions and names. The only change: every agent gets the run's scripted
model (`Models`) instead of ``'openai:gpt-5.2'``, so no request leaves the machine.
"""

from __future__ import annotations

from datetime import date
from typing import Any, NotRequired

from pydantic import BaseModel
from pydantic_ai import Agent, NativeOutput, PromptedOutput, TextOutput, ToolOutput
from typing_extensions import TypedDict

from sessionflow.testing import InvocationLog
from tests.adapter_pydantic_ai.differential.harness import Built, Models

__all__ = [
    "Box",
    "Device",
    "Fruit",
    "UserProfile",
    "Vehicle",
    "box_or_error",
    "colors_or_sizes",
    "native_output",
    "prompted_output",
    "text_output_function",
    "tool_output",
    "user_profile",
]


class Box(BaseModel):
    width: int
    height: int
    depth: int
    units: str


def box_or_error(models: Models, log: InvocationLog) -> Built:
    """box_or_error.py: ``output_type=[Box, str]``, text or the output tool."""
    agent = Agent(
        models.model(),
        output_type=[Box, str],
        instructions=(
            "Extract me the dimensions of a box, if you can't extract all data, ask the user to try again."
        ),
    )
    return Built(agent=agent)


def colors_or_sizes(models: Models, log: InvocationLog) -> Built:
    """colors_or_sizes.py: a union of two list types, one output tool each."""
    agent = Agent[object, list[str] | list[int]](
        models.model(),
        output_type=list[str] | list[int],
        instructions="Extract either colors or sizes from the shapes provided.",
    )
    return Built(agent=agent)


class Fruit(BaseModel):
    name: str
    color: str


class Vehicle(BaseModel):
    name: str
    wheels: int


def tool_output(models: Models, log: InvocationLog) -> Built:
    """tool_output.py: two ``ToolOutput``s with their own tool names."""
    agent = Agent(
        models.model(),
        output_type=[
            ToolOutput(Fruit, name="return_fruit"),
            ToolOutput(Vehicle, name="return_vehicle"),
        ],
    )
    return Built(agent=agent)


def native_output(models: Models, log: InvocationLog) -> Built:
    """native_output.py: the model's JSON schema response format."""
    agent = Agent(
        models.model(),
        output_type=NativeOutput(
            [Fruit, Vehicle], name="Fruit_or_vehicle", description="Return a fruit or vehicle."
        ),
    )
    return Built(agent=agent)


class Device(BaseModel):
    name: str
    kind: str


def prompted_output(models: Models, log: InvocationLog) -> Built:
    """prompted_output.py (its first agent): the schema in the instructions, JSON as text."""
    agent = Agent(
        models.model(),
        output_type=PromptedOutput(
            [Vehicle, Device], name="Vehicle or device", description="Return a vehicle or device."
        ),
    )
    return Built(agent=agent)


def text_output_function(models: Models, log: InvocationLog) -> Built:
    """text_output_function.py: plain text, turned into words by an output function."""

    def split_into_words(text: str) -> list[str]:
        log.record("output", "split_into_words", text=text)
        return text.split()

    agent = Agent(models.model(), output_type=TextOutput(split_into_words))
    return Built(agent=agent)


class UserProfile(TypedDict):
    name: str
    dob: NotRequired[date]
    bio: NotRequired[str]


def user_profile(models: Models, log: InvocationLog) -> Built:
    """streamed_user_profile.py's agent (a TypedDict through the output tool)."""
    agent = Agent[Any, UserProfile](
        models.model(),
        output_type=UserProfile,
        instructions="Extract a user profile from the input",
    )
    return Built(agent=agent)
