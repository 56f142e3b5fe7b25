"""basic/tool_guardrails.py of the OpenAI Agents SDK's examples, as builders for both runs.

Copied with the same tools, guardrails, instructions and settings. What changed, and why:

* every tool and every guardrail logs its run to the run's `InvocationLog` (kinds ``tool``
  and ``guardrail``), so the tests count real runs: a call its input guardrail blocks must
  leave no ``tool`` line, in the session as in plain;
* the agent gets the run's scripted model;
* `tool_guardrails_tripping` (not in the example) makes ``reject_sensitive_words`` raise
  (``ToolGuardrailFunctionOutput.raise_exception``) instead of rejecting, so a tool *input*
  tripwire is tested too: the example only trips an output guardrail;
* `tool_guardrails_approved` (not in the example) gives ``send_email`` the SDK's own
  ``needs_approval=True``, so the guardrail runs after a person approved the call, in both runs;
* `sub_agent_tool_tripping` (not in the example) gives agents_as_tools.py's translator a
  glossary tool whose input guardrail raises on the word "secret";
* `agent_tool_guardrails` (not in the example) puts the example's ``reject_sensitive_words``
  and a phone-number rejection on agent_patterns/agents_as_tools.py's ``translate_to_spanish``.

Each builder is module-level, so a worker child rebuilds it by name (`crash.py`).
"""

from __future__ import annotations

import json
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    Tool,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrailData,
    ToolOutputGuardrailData,
)
from agents.decorators import tool, tool_input_guardrail, tool_output_guardrail

from sessionflow.testing import InvocationLog
from tests.adapter_openai.differential.harness import Built, Models

__all__ = [
    "agent_tool_guardrails",
    "sub_agent_tool_tripping",
    "tool_guardrails",
    "tool_guardrails_approved",
    "tool_guardrails_tripping",
]

SENSITIVE_WORDS = ["password", "hack", "exploit", "malware", "ACME"]


def _tools(log: InvocationLog, *, input_trips: bool) -> list[FunctionTool]:
    @tool
    def send_email(to: str, subject: str, body: str) -> str:
        """Send an email to the specified recipient."""
        log.record("tool", "send_email", to=to, subject=subject)
        return f"Email sent to {to} with subject '{subject}'"

    @tool
    def get_user_data(user_id: str) -> dict[str, str]:
        """Get user data by ID."""
        log.record("tool", "get_user_data", user_id=user_id)
        # Simulate returning sensitive data
        return {
            "user_id": user_id,
            "name": "John Doe",
            "email": "john@example.com",
            "ssn": "123-45-6789",  # Sensitive data that should be blocked!
            "phone": "555-1234",
        }

    @tool
    def get_contact_info(user_id: str) -> dict[str, str]:
        """Get contact info by ID."""
        log.record("tool", "get_contact_info", user_id=user_id)
        return {
            "user_id": user_id,
            "name": "Jane Smith",
            "email": "jane@example.com",
            "phone": "555-1234",
        }

    @tool_input_guardrail
    def reject_sensitive_words(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        """Reject tool calls that contain sensitive words in arguments."""
        log.record("guardrail", "reject_sensitive_words", tool=data.context.tool_name)
        try:
            args: dict[str, Any] = (
                json.loads(data.context.tool_arguments) if data.context.tool_arguments else {}
            )
        except json.JSONDecodeError:
            return ToolGuardrailFunctionOutput(output_info="Invalid JSON arguments")

        for key, value in args.items():
            value_str = str(value).lower()
            for word in SENSITIVE_WORDS:
                if word.lower() in value_str:
                    if input_trips:
                        return ToolGuardrailFunctionOutput.raise_exception(
                            output_info={"blocked_word": word, "argument": key}
                        )
                    # Reject tool call and inform the model the function was not called
                    return ToolGuardrailFunctionOutput.reject_content(
                        message=f"🚨 Tool call blocked: contains '{word}'",
                        output_info={"blocked_word": word, "argument": key},
                    )

        return ToolGuardrailFunctionOutput(output_info="Input validated")

    @tool_output_guardrail
    def block_sensitive_output(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        """Block tool outputs that contain sensitive data."""
        log.record("guardrail", "block_sensitive_output", tool=data.context.tool_name)
        output_str = str(data.output).lower()

        # Check for sensitive data patterns
        if "ssn" in output_str or "123-45-6789" in output_str:
            # Use raise_exception to halt execution completely for sensitive data
            return ToolGuardrailFunctionOutput.raise_exception(
                output_info={"blocked_pattern": "SSN", "tool": data.context.tool_name},
            )

        return ToolGuardrailFunctionOutput(output_info="Output validated")

    @tool_output_guardrail
    def reject_phone_numbers(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        """Reject function output containing phone numbers."""
        log.record("guardrail", "reject_phone_numbers", tool=data.context.tool_name)
        output_str = str(data.output)
        if "555-1234" in output_str:
            return ToolGuardrailFunctionOutput.reject_content(
                message="User data not retrieved as it contains a phone number which is restricted.",
                output_info={"redacted": "phone_number"},
            )
        return ToolGuardrailFunctionOutput(output_info="Phone number check passed")

    # Apply guardrails to tools
    send_email.tool_input_guardrails = [reject_sensitive_words]
    get_user_data.tool_output_guardrails = [block_sensitive_output]
    get_contact_info.tool_output_guardrails = [reject_phone_numbers]
    return [send_email, get_user_data, get_contact_info]


def _agent(models: Models, tools: list[FunctionTool]) -> Agent[Any]:
    return Agent[Any](
        name="Secure Assistant",
        instructions=(
            "You are a helpful assistant with access to email and user data tools. "
            "When the user provides all required arguments for a requested tool, call it instead of "
            "asking a follow-up question."
        ),
        tools=list[Tool](tools),
        model=models.model(),
    )


def tool_guardrails(models: Models, log: InvocationLog) -> Built:
    """The example's agent: an input guardrail that rejects, output guardrails that trip and reject."""
    return Built(_agent(models, _tools(log, input_trips=False)))


def tool_guardrails_tripping(models: Models, log: InvocationLog) -> Built:
    """The example's agent, its input guardrail raising instead of rejecting (a tool input tripwire)."""
    return Built(_agent(models, _tools(log, input_trips=True)))


def tool_guardrails_approved(models: Models, log: InvocationLog) -> Built:
    """The example's agent, ``send_email`` held for a person (``needs_approval=True``)."""
    tools = _tools(log, input_trips=False)
    tools[0].needs_approval = True
    return Built(_agent(models, tools))


def agent_tool_guardrails(models: Models, log: InvocationLog) -> Built:
    """agents_as_tools.py's orchestrator; its agent tool has an input guardrail (the example's
    ``reject_sensitive_words``) and an output guardrail that rejects a phone number."""
    send_email = _tools(log, input_trips=False)[0]
    spanish_agent = Agent[Any](
        name="spanish_agent",
        instructions="You translate the user's message to Spanish",
        handoff_description="An english to spanish translator",
        model=models.model(),
    )

    @tool_output_guardrail
    def reject_phone_numbers(data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        log.record("guardrail", "reject_phone_numbers", tool=data.context.tool_name)
        if "555-1234" in str(data.output):
            return ToolGuardrailFunctionOutput.reject_content(
                message="The translation contains a phone number."
            )
        return ToolGuardrailFunctionOutput(output_info="Phone number check passed")

    translate = spanish_agent.as_tool(
        tool_name="translate_to_spanish", tool_description="Translate the user's message to Spanish"
    )
    translate.tool_input_guardrails = list(send_email.tool_input_guardrails or [])
    translate.tool_output_guardrails = [reject_phone_numbers]
    orchestrator = Agent[Any](
        name="orchestrator_agent",
        instructions=(
            "You are a translation agent. You use the tools given to you to translate."
            "If asked for multiple translations, you call the relevant tools in order."
            "You never translate on your own, you always use the provided tools."
        ),
        tools=[translate],
        model=models.model(),
    )
    return Built(orchestrator)


def sub_agent_tool_tripping(models: Models, log: InvocationLog) -> Built:
    """agents_as_tools.py's translator with a glossary tool whose input guardrail trips on
    "secret": the nested run raises, and ``as_tool``'s failure function answers the parent."""

    @tool_input_guardrail
    def no_secrets(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        log.record("guardrail", "no_secrets", tool=data.context.tool_name)
        if "secret" in (data.context.tool_arguments or ""):
            return ToolGuardrailFunctionOutput.raise_exception(output_info={"blocked": "secret"})
        return ToolGuardrailFunctionOutput(output_info="ok")

    @tool
    def lookup_glossary(word: str) -> str:
        """Look up the house translation of a word."""
        log.record("tool", "lookup_glossary", word=word)
        return f"{word}: mundo"

    lookup_glossary.tool_input_guardrails = [no_secrets]
    model = models.model()
    spanish_agent = Agent[Any](
        name="spanish_agent",
        instructions="You translate the user's message to Spanish",
        handoff_description="An english to spanish translator",
        tools=[lookup_glossary],
        model=model,
    )
    orchestrator = Agent[Any](
        name="orchestrator_agent",
        instructions=(
            "You are a translation agent. You use the tools given to you to translate."
            "If asked for multiple translations, you call the relevant tools in order."
            "You never translate on your own, you always use the provided tools."
        ),
        tools=[
            spanish_agent.as_tool(
                tool_name="translate_to_spanish", tool_description="Translate the user's message to Spanish"
            )
        ],
        model=model,
    )
    return Built(orchestrator)
