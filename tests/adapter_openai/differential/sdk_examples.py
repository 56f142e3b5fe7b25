"""The agents of the OpenAI Agents SDK's own examples, copied as builders for both runs.

Copied from openai/openai-agents-python (``examples/``) with the same names, instructions,
tools and settings. What changed, and why:

* every tool logs its run to the run's `InvocationLog` once it has done its work (so the
  tests count real runs, and a crash test can hold one at a gate), and so does the customer
  service example's ``on_handoff`` callback (kind ``callback``), so the tests count its runs;
* every agent gets the run's scripted model (`Models`), where the examples use the
  default OpenAI model;
* the customer service example's ``on_seat_booking_handoff`` draws a random flight number;
  here it is ``FLT-123``, because two runs of the example never agree on a random number;
* the input guardrail example's guardrail runs before the agent (``run_in_parallel=False``)
  rather than beside it: beside it, whether the agent's model call of a tripped turn reaches
  the server first is a race, in the plain SDK too;
* custom_example_provider.py's provider gives the scripted Responses model (the example's
  is a Chat Completions model on an environment-given server), and its run config also
  sets model settings, so both runs must send them;
* sqlite_session_example.py's questions keep their order; the scripted answers are short.

Each builder is module-level, so a worker child rebuilds it by name (`crash.py`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    FunctionToolResult,
    GuardrailFunctionOutput,
    Model,
    ModelProvider,
    ModelSettings,
    RunConfig,
    RunContextWrapper,
    Runner,
    StopAtTools,
    ToolsToFinalOutputResult,
    TResponseInputItem,
    function_tool,
    handoff,
    input_guardrail,
    output_guardrail,
)
from agents.extensions.handoff_prompt import RECOMMENDED_PROMPT_PREFIX
from agents.mcp import MCPServerStdio
from pydantic import BaseModel, Field

from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential.harness import Built, Models
from tests.crash_tool_log import ToolLog

__all__ = [
    "AirlineAgentContext",
    "agents_as_tools",
    "agents_as_tools_nested",
    "agents_as_tools_with_a_glossary",
    "custom_provider",
    "customer_service",
    "forcing_tool_use",
    "hello_world",
    "human_in_the_loop",
    "human_in_the_loop_publish",
    "input_guardrails",
    "input_guardrails_answering",
    "mcp_notes",
    "mcp_notes_approval",
    "output_guardrails",
    "output_guardrails_answering",
    "sqlite_memory",
    "stream_items",
    "tools",
    "weather_tool",
]


# -- customer_service/main.py --------------------------------------------------------------


class AirlineAgentContext(BaseModel):
    passenger_name: str | None = None
    confirmation_number: str | None = None
    seat_number: str | None = None
    flight_number: str | None = None


def customer_service(models: Models, log: InvocationLog) -> Built:
    """Triage, FAQ and seat booking agents handing off to each other, with a pydantic context."""

    @function_tool(name_override="faq_lookup_tool", description_override="Lookup frequently asked questions.")
    async def faq_lookup_tool(question: str) -> str:
        question_lower = question.lower()
        log.record("tool", "faq_lookup_tool", question=question)
        if any(
            keyword in question_lower
            for keyword in ["bag", "baggage", "luggage", "carry-on", "hand luggage", "hand carry"]
        ):
            return (
                "You are allowed to bring one bag on the plane. "
                "It must be under 50 pounds and 22 inches x 14 inches x 9 inches."
            )
        elif any(keyword in question_lower for keyword in ["seat", "seats", "seating", "plane"]):
            return (
                "There are 120 seats on the plane. "
                "There are 22 business class seats and 98 economy seats. "
                "Exit rows are rows 4 and 16. "
                "Rows 5-8 are Economy Plus, with extra legroom. "
            )
        elif any(
            keyword in question_lower
            for keyword in ["wifi", "internet", "wireless", "connectivity", "network", "online"]
        ):
            return "We have free wifi on the plane, join Airline-Wifi"
        return "I'm sorry, I don't know the answer to that question."

    @function_tool
    async def update_seat(
        context: RunContextWrapper[AirlineAgentContext], confirmation_number: str, new_seat: str
    ) -> str:
        """
        Update the seat for a given confirmation number.

        Args:
            confirmation_number: The confirmation number for the flight.
            new_seat: The new seat to update to.
        """
        # Update the context based on the customer's input
        context.context.confirmation_number = confirmation_number
        context.context.seat_number = new_seat
        # Ensure that the flight number has been set by the incoming handoff
        assert context.context.flight_number is not None, "Flight number is required"
        log.record("tool", "update_seat", confirmation_number=confirmation_number, new_seat=new_seat)
        return f"Updated seat to {new_seat} for confirmation number {confirmation_number}"

    async def on_seat_booking_handoff(context: RunContextWrapper[AirlineAgentContext]) -> None:
        log.record("callback", "on_seat_booking_handoff")
        context.context.flight_number = "FLT-123"  # the example: f"FLT-{random.randint(100, 999)}"

    model = models.model()
    faq_agent = Agent[AirlineAgentContext](
        name="FAQ Agent",
        handoff_description="A helpful agent that can answer questions about the airline.",
        instructions=f"""{RECOMMENDED_PROMPT_PREFIX}
    You are an FAQ agent. If you are speaking to a customer, you probably were transferred to from the triage agent.
    Use the following routine to support the customer.
    # Routine
    1. Identify the last question asked by the customer.
    2. Use the faq lookup tool to answer the question. Do not rely on your own knowledge.
    3. If you cannot answer the question, transfer back to the triage agent.""",
        tools=[faq_lookup_tool],
        model=model,
    )
    seat_booking_agent = Agent[AirlineAgentContext](
        name="Seat Booking Agent",
        handoff_description="A helpful agent that can update a seat on a flight.",
        instructions=f"""{RECOMMENDED_PROMPT_PREFIX}
    You are a seat booking agent. If you are speaking to a customer, you probably were transferred to from the triage agent.
    Use the following routine to support the customer.
    # Routine
    1. Ask for their confirmation number.
    2. Ask the customer what their desired seat number is.
    3. Use the update seat tool to update the seat on the flight.
    If the customer asks a question that is not related to the routine, transfer back to the triage agent. """,
        tools=[update_seat],
        model=model,
    )
    triage_agent = Agent[AirlineAgentContext](
        name="Triage Agent",
        handoff_description="A triage agent that can delegate a customer's request to the appropriate agent.",
        instructions=(
            f"{RECOMMENDED_PROMPT_PREFIX} "
            "You are a helpful triaging agent. You can use your tools to delegate questions to other appropriate agents."
        ),
        handoffs=[
            handoff(agent=faq_agent, tool_name_override="transfer_to_faq_agent"),
            handoff(
                agent=seat_booking_agent,
                on_handoff=on_seat_booking_handoff,
                tool_name_override="transfer_to_seat_booking_agent",
            ),
        ],
        model=model,
    )
    faq_agent.handoffs.append(handoff(agent=triage_agent, tool_name_override="transfer_to_triage_agent"))
    seat_booking_agent.handoffs.append(
        handoff(agent=triage_agent, tool_name_override="transfer_to_triage_agent")
    )
    return Built(triage_agent, context=AirlineAgentContext)


# -- agent_patterns/human_in_the_loop.py ---------------------------------------------------


def human_in_the_loop(models: Models, log: InvocationLog) -> Built:
    """A weather assistant whose temperature tool asks for approval for Oakland only."""

    @function_tool
    async def get_weather(city: str) -> str:
        """Get the weather for a given city.

        Args:
            city: The city to get weather for.

        Returns:
            Weather information for the city.
        """
        log.record("tool", "get_weather", city=city)
        return f"The weather in {city} is sunny"

    async def _needs_temperature_approval(
        _ctx: RunContextWrapper[Any], params: dict[str, Any], _call_id: str
    ) -> bool:
        """Check if temperature tool needs approval."""
        return "Oakland" in params.get("city", "")

    @function_tool(
        # Dynamic approval: only require approval for Oakland
        needs_approval=_needs_temperature_approval
    )
    async def get_temperature(city: str) -> str:
        """Get the temperature for a given city.

        Args:
            city: The city to get temperature for.

        Returns:
            Temperature information for the city.
        """
        log.record("tool", "get_temperature", city=city)
        return f"The temperature in {city} is 20° Celsius"

    agent = Agent[Any](
        name="Weather Assistant",
        instructions=(
            "You are a helpful weather assistant. "
            "Answer questions about weather and temperature using the available tools."
        ),
        tools=[get_weather, get_temperature],
        model=models.model(),
    )
    return Built(agent)


# -- agent_patterns/human_in_the_loop_custom_rejection.py (without its error formatter) ----


def human_in_the_loop_publish(models: Models, log: InvocationLog) -> Built:
    """A tool with ``needs_approval=True``: every call waits for a person."""

    @function_tool(needs_approval=True)
    async def publish_announcement(title: str, body: str) -> str:
        """Simulate publishing an announcement to users."""
        log.record("tool", "publish_announcement", title=title, body=body)
        return f"Published announcement '{title}' with body: {body}"

    agent = Agent[Any](
        name="Operations Assistant",
        instructions=(
            "When a user asks to publish an announcement, call the publish_announcement tool directly. "
            "Do not ask the user for approval in plain text; runtime approvals handle that. "
            "If the tool call is rejected, respond with the exact rejection message and nothing else."
        ),
        model_settings=ModelSettings(tool_choice="publish_announcement"),
        tools=[publish_announcement],
        model=models.model(),
    )
    return Built(agent)


# -- agent_patterns/agents_as_tools.py -------------------------------------------------------


def agents_as_tools(models: Models, log: InvocationLog) -> Built:
    """An orchestrator that calls translator agents as tools (they share the run's model)."""
    model = models.model()
    spanish_agent = Agent[Any](
        name="spanish_agent",
        instructions="You translate the user's message to Spanish",
        handoff_description="An english to spanish translator",
        model=model,
    )
    french_agent = Agent[Any](
        name="french_agent",
        instructions="You translate the user's message to French",
        handoff_description="An english to french translator",
        model=model,
    )
    orchestrator_agent = Agent[Any](
        name="orchestrator_agent",
        instructions=(
            "You are a translation agent. You use the tools given to you to translate."
            "If asked for multiple translations, you call the relevant tools in order."
            "You never translate on your own, you always use the provided tools."
        ),
        tools=[
            spanish_agent.as_tool(
                tool_name="translate_to_spanish",
                tool_description="Translate the user's message to Spanish",
            ),
            french_agent.as_tool(
                tool_name="translate_to_french",
                tool_description="Translate the user's message to French",
            ),
        ],
        model=model,
    )
    return Built(orchestrator_agent)


def glossary_tool(log: InvocationLog) -> FunctionTool:
    """The translators' own tool in the agents-as-tools cases (not in the example)."""

    @function_tool
    async def lookup_glossary(word: str) -> str:
        """Look up the house translation of a word."""
        log.record("tool", "lookup_glossary", word=word)
        return f"{word}: mundo"

    return lookup_glossary


def agents_as_tools_with_a_glossary(models: Models, log: InvocationLog) -> Built:
    """agents_as_tools.py with a tool in the translator (not in the example), so a crash can
    hit a sub-agent's own tool call: the example's translators have none."""

    lookup_glossary = glossary_tool(log)
    model = models.model()
    spanish_agent = Agent[Any](
        name="spanish_agent",
        instructions="You translate the user's message to Spanish",
        handoff_description="An english to spanish translator",
        tools=[lookup_glossary],
        model=model,
    )
    orchestrator_agent = Agent[Any](
        name="orchestrator_agent",
        instructions=(
            "You are a translation agent. You use the tools given to you to translate."
            "If asked for multiple translations, you call the relevant tools in order."
            "You never translate on your own, you always use the provided tools."
        ),
        tools=[
            spanish_agent.as_tool(
                tool_name="translate_to_spanish",
                tool_description="Translate the user's message to Spanish",
            ),
        ],
        model=model,
    )
    return Built(orchestrator_agent)


def agents_as_tools_nested(models: Models, log: InvocationLog) -> Built:
    """agents_as_tools.py one level deeper (not in the example): the translator asks an
    editor agent, itself used as a tool, and the editor looks the word up."""

    lookup_glossary = glossary_tool(log)
    model = models.model()
    editor_agent = Agent[Any](
        name="editor_agent",
        instructions="You check translations against the house glossary",
        tools=[lookup_glossary],
        model=model,
    )
    spanish_agent = Agent[Any](
        name="spanish_agent",
        instructions="You translate the user's message to Spanish",
        tools=[editor_agent.as_tool(tool_name="ask_editor", tool_description="Ask the editor about a word")],
        model=model,
    )
    orchestrator_agent = Agent[Any](
        name="orchestrator_agent",
        instructions="You are a translation agent. You always use the provided tools.",
        tools=[
            spanish_agent.as_tool(
                tool_name="translate_to_spanish",
                tool_description="Translate the user's message to Spanish",
            ),
        ],
        model=model,
    )
    return Built(orchestrator_agent)


# -- basic/hello_world.py, basic/tools.py, basic/stream_items.py -----------------------------


def hello_world(models: Models, log: InvocationLog) -> Built:
    """An agent without tools (the reasoning-only test scripts a response with reasoning alone)."""
    agent = Agent[Any](name="Assistant", instructions="You only respond in haikus.", model=models.model())
    return Built(agent)


class Weather(BaseModel):
    city: str = Field(description="The city name")
    temperature_range: str = Field(description="The temperature range in Celsius")
    conditions: str = Field(description="The weather conditions")


def weather_tool(log: InvocationLog) -> FunctionTool:
    """basic/tools.py's ``get_weather``, logging each real run."""

    @function_tool
    def get_weather(city: str) -> Weather:
        """Get the current weather information for a specified city."""
        log.record("tool", "get_weather", city=city)
        return Weather(city=city, temperature_range="14-20C", conditions="Sunny with wind.")

    return get_weather


def _weather_agent(models: Models, log: InvocationLog, **settings: Any) -> Agent[Any]:
    return Agent[Any](
        name="Hello world",
        instructions="You are a helpful agent.",
        tools=[weather_tool(log)],
        model=models.model(),
        **settings,
    )


def tools(models: Models, log: InvocationLog) -> Built:
    """basic/tools.py: one tool returning a pydantic model."""
    return Built(_weather_agent(models, log))


def tools_max_turns(models: Models, log: InvocationLog) -> Built:
    """basic/tools.py with ``max_turns=2``: a third model call is over the SDK's budget."""
    return Built(_weather_agent(models, log), max_turns=2)


def tools_stop_at(models: Models, log: InvocationLog) -> Built:
    """basic/tools.py with ``tool_use_behavior=StopAtTools(...)``: the tool's result is the output."""
    return Built(
        _weather_agent(models, log, tool_use_behavior=StopAtTools(stop_at_tool_names=["get_weather"]))
    )


# -- model_providers/custom_example_provider.py, memory/sqlite_session_example.py ----------


class _ScriptedProvider(ModelProvider):
    """custom_example_provider.py's `CustomModelProvider`, on the scripted server."""

    def __init__(self, models: Models) -> None:
        self.models = models

    def get_model(self, model_name: str | None) -> Model:
        return self.models.model()


def custom_provider(models: Models, log: InvocationLog) -> Built:
    """custom_example_provider.py: the agent names no model; the run config's provider gives it.

    The run config also sets model settings (temperature, top_p, max_tokens, a metadata
    tag), which both runs must send on every request.
    """

    @function_tool
    def get_weather(city: str) -> str:
        """Get the current weather information for a specified city."""
        log.record("tool", "get_weather", city=city)
        return f"The weather in {city} is sunny."

    agent = Agent[Any](name="Assistant", instructions="You only respond in haikus.", tools=[get_weather])
    settings = ModelSettings(temperature=0.3, top_p=0.9, max_tokens=200, metadata={"example": "provider"})
    return Built(
        agent, run_config=RunConfig(model_provider=_ScriptedProvider(models), model_settings=settings)
    )


def sqlite_memory(models: Models, log: InvocationLog) -> Built:
    """sqlite_session_example.py's agent; the plain run keeps the conversation in a SQLiteSession."""
    return Built(Agent[Any](name="Assistant", instructions="Reply very concisely.", model=models.model()))


# -- mcp/filesystem_example.py, on the tests' notes server ------------------------------------


def _notes_server(log: InvocationLog, **settings: Any) -> MCPServerStdio:
    """tests/adapter_openai/mcp_server.py over stdio: ``read_note`` (read-only, idempotent
    hints) and ``delete_note`` (destructive); each real run logs to the run's log."""
    return MCPServerStdio(
        params={
            "command": sys.executable,
            "args": ["-m", "tests.adapter_openai.mcp_server"],
            "cwd": str(Path(__file__).resolve().parents[3]),
            # A crash run's log passes its gate on, so the server holds its tool there.
            "env": {
                **os.environ,
                "MCP_TEST_LOG": str(log.path),
                **(log.env() if isinstance(log, ToolLog) else {}),
            },
        },
        name="notes",
        **settings,
    )


def mcp_notes(models: Models, log: InvocationLog) -> Built:
    """filesystem_example.py's agent shape (``mcp_servers=[server]``) on the notes server."""
    agent = Agent[Any](
        name="Assistant",
        instructions="Use the tools to read and manage the notes and answer questions about them.",
        mcp_servers=[_notes_server(log)],
        model=models.model(),
    )
    return Built(agent)


def mcp_notes_approval(models: Models, log: InvocationLog) -> Built:
    """The same, with the server's own ``require_approval`` for ``delete_note``."""
    server = _notes_server(log, require_approval={"always": {"tool_names": ["delete_note"]}})
    agent = Agent[Any](
        name="Assistant",
        instructions="Use the tools to read and manage the notes and answer questions about them.",
        mcp_servers=[server],
        model=models.model(),
    )
    return Built(agent)


def stream_items(models: Models, log: InvocationLog) -> Built:
    """The Joker: calls `how_many_jokes`, then tells that many (the example's random count is 4)."""

    @function_tool
    def how_many_jokes() -> int:
        """Return a random integer of jokes to tell between 1 and 10 (inclusive)."""
        log.record("tool", "how_many_jokes")
        return 4  # the example: random.randint(1, 10), which two runs never agree on

    agent = Agent[Any](
        name="Joker",
        instructions="First call the `how_many_jokes` tool, then tell that many jokes.",
        tools=[how_many_jokes],
        model=models.model(),
    )
    return Built(agent)


# -- agent_patterns/forcing_tool_use.py -------------------------------------------------------


async def custom_tool_use_behavior(
    context: RunContextWrapper[Any], results: list[FunctionToolResult]
) -> ToolsToFinalOutputResult:
    weather: Weather = results[0].output
    return ToolsToFinalOutputResult(
        is_final_output=True, final_output=f"{weather.city} is {weather.conditions}."
    )


def forcing_tool_use(models: Models, log: InvocationLog) -> Built:
    """``tool_use_behavior="stop_on_first_tool"`` with ``tool_choice="required"``."""
    return Built(
        _forcing_agent(models, log, "stop_on_first_tool"),
    )


def forcing_tool_use_custom(models: Models, log: InvocationLog) -> Built:
    """A custom tool-use function that reads the tool's pydantic result."""
    return Built(_forcing_agent(models, log, custom_tool_use_behavior))


def _forcing_agent(models: Models, log: InvocationLog, behavior: Any) -> Agent[Any]:
    @function_tool
    def get_weather(city: str) -> Weather:
        log.record("tool", "get_weather", city=city)
        return Weather(city=city, temperature_range="14-20C", conditions="Sunny with wind")

    return Agent[Any](
        name="Weather agent",
        instructions="You are a helpful agent.",
        tools=[get_weather],
        tool_use_behavior=behavior,
        model_settings=ModelSettings(tool_choice="required"),
        model=models.model(),
    )


# -- agent_patterns/input_guardrails.py, output_guardrails.py ---------------------------------


class MathHomeworkOutput(BaseModel):
    reasoning: str
    is_math_homework: bool


def input_guardrails(models: Models, log: InvocationLog) -> Built:
    """A support agent whose input guardrail asks a guardrail agent (its own conversation)."""
    guardrail_agent = Agent[Any](
        name="Guardrail check",
        instructions="Check if the user is asking you to do their math homework.",
        output_type=MathHomeworkOutput,
        model=models.model("-guardrail"),
    )

    @input_guardrail(run_in_parallel=False)
    async def math_guardrail(
        context: RunContextWrapper[None], agent: Agent[Any], input: str | list[TResponseInputItem]
    ) -> GuardrailFunctionOutput:
        """This is an input guardrail function, which happens to call an agent to check if the input
        is a math homework question.
        """
        result = await Runner.run(guardrail_agent, input, context=context.context)
        final_output = result.final_output_as(MathHomeworkOutput)
        return GuardrailFunctionOutput(
            output_info=final_output,
            tripwire_triggered=final_output.is_math_homework,
        )

    agent = Agent[Any](
        name="Customer support agent",
        instructions="You are a customer support agent. You help customers with their questions.",
        input_guardrails=[math_guardrail],
        model=models.model(),
    )
    return Built(agent)


def input_guardrails_answering(models: Models, log: InvocationLog) -> Built:
    """The same agent; the session is asked to answer a tripwire as the example's loop does.

    ``on_guardrail_tripwire`` is the adapter's option for it:
    given the SDK's tripwire exception, it returns the text to store as the assistant's
    answer, or None to fail the turn.
    """
    built = input_guardrails(models, log)
    return Built(built.agent, flow_args={"on_guardrail_tripwire": refuse_math_homework})


MATH_REFUSAL = "Sorry, I can't help you with your math homework."


def refuse_math_homework(error: Exception) -> str | None:
    return MATH_REFUSAL


class MessageOutput(BaseModel):
    reasoning: str = Field(description="Thoughts on how to respond to the user's message")
    response: str = Field(description="The response to the user's message")
    user_name: str | None = Field(description="The name of the user who sent the message, if known")


def output_guardrails(models: Models, log: InvocationLog) -> Built:
    """An assistant with a structured output and a guardrail against phone numbers in it."""

    @output_guardrail
    async def sensitive_data_check(
        context: RunContextWrapper[Any], agent: Agent[Any], output: MessageOutput
    ) -> GuardrailFunctionOutput:
        phone_number_in_response = "650" in output.response
        phone_number_in_reasoning = "650" in output.reasoning
        return GuardrailFunctionOutput(
            output_info={
                "phone_number_in_response": phone_number_in_response,
                "phone_number_in_reasoning": phone_number_in_reasoning,
            },
            tripwire_triggered=phone_number_in_response or phone_number_in_reasoning,
        )

    agent = Agent[Any](
        name="Assistant",
        instructions="You are a helpful assistant.",
        output_type=MessageOutput,
        output_guardrails=[sensitive_data_check],
        model=models.model(),
    )
    return Built(agent)


PHONE_REFUSAL = "Sorry, I can't share that."


def refuse_phone_numbers(error: Exception) -> str | None:
    return PHONE_REFUSAL


def output_guardrails_answering(models: Models, log: InvocationLog) -> Built:
    """The same assistant; the session is asked to answer an output tripwire (see
    `input_guardrails_answering` for the proposed option)."""
    built = output_guardrails(models, log)
    return Built(built.agent, flow_args={"on_guardrail_tripwire": refuse_phone_numbers})
