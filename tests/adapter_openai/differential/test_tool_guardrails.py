"""Tool guardrails (issue 39, item 1): basic/tool_guardrails.py, run where the plain SDK runs them.

A tool's input guardrails run before the tool, in its tool step: a call they reject or trip
never runs its function (no ``send_email`` line in the log), and the model is told what the
plain SDK tells it. Output guardrails run on the tool's result in the same step, so a
tripped output never reaches the model or the stored messages. A tripwire ends the turn as
plain's ``Runner.run`` raises it, and nothing is retried: each test counts the model calls
and the model steps.
"""

from __future__ import annotations

import json
from pathlib import Path

from sessionflow.demo import ModelReply, ScriptedModelServer, ScriptedToolCall
from tests.adapter_openai.differential import tool_guardrail_examples
from tests.adapter_openai.differential.harness import (
    Scenario,
    assert_same_run,
    failure_note,
    run_both,
)

WELCOME = ScriptedToolCall(
    "call_welcome",
    "send_email",
    {"to": "john@example.com", "subject": "Welcome", "body": "Welcome to our service."},
)
ACME = ScriptedToolCall(
    "call_acme",
    "send_email",
    {"to": "john@example.com", "subject": "Introduction", "body": "Introducing ACME corp."},
)
USER_DATA = ScriptedToolCall("call_data", "get_user_data", {"user_id": "user123"})
CONTACT = ScriptedToolCall("call_contact", "get_contact_info", {"user_id": "user456"})

SEND_WELCOME = "Send an email to john@example.com with subject 'Welcome' and body 'Welcome to our service.'"
SEND_ACME = "Send an email to john@example.com with subject 'Introduction' and body 'Introducing ACME corp.'"
BLOCKED = "🚨 Tool call blocked: contains 'ACME'"
PHONE_REJECTED = "User data not retrieved as it contains a phone number which is restricted."


def guardrail_runs(runs: list[dict[str, object]]) -> list[object]:
    return [run["name"] for run in runs if run["kind"] == "guardrail"]


async def test_a_rejected_input_never_runs_the_tool_and_a_rejected_output_is_replaced(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The example's runs 1, 2 and 4, as turns of one conversation."""
    scenario = Scenario(
        name="tool-guardrails",
        build=tool_guardrail_examples.tool_guardrails,
        script=[
            ModelReply.call(WELCOME),
            ModelReply.say("I've sent a welcome email to john@example.com."),
            ModelReply.call(ACME),
            ModelReply.say("I'm unable to send the email as mentioning ACME Corp. is restricted."),
            ModelReply.call(CONTACT),
            ModelReply.say("I'm unable to retrieve the contact info for user456."),
        ],
        turns=[SEND_WELCOME, SEND_ACME, "Get contact info for user456"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    # The blocked email was never sent; the contact lookup ran and its output was replaced.
    assert plain.tool_runs == [
        {"name": "send_email", "to": "john@example.com", "subject": "Welcome"},
        {"name": "get_contact_info", "user_id": "user456"},
    ]
    assert guardrail_runs(plain.code_runs) == [
        "reject_sensitive_words",
        "reject_sensitive_words",
        "reject_phone_numbers",
    ]
    requests = plain.requests[""]
    assert requests[3]["input"][-1] == {
        "call_id": "call_acme",
        "output": BLOCKED,
        "type": "function_call_output",
    }
    assert requests[5]["input"][-1]["output"] == PHONE_REJECTED
    assert "555-1234" not in json.dumps(plain.history)
    assert_same_run(plain, session)


async def test_an_output_tripwire_ends_the_turn_and_its_output_is_never_stored(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The example's run 3: ``block_sensitive_output`` raises on the SSN."""
    scenario = Scenario(
        name="tool-output-tripwire",
        build=tool_guardrail_examples.tool_guardrails,
        script=[ModelReply.call(USER_DATA), ModelReply.say("never asked for")],
        turns=["Get the data for user ID user123"],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.errors == [
        "ToolOutputGuardrailTripwireTriggered: Tool output guardrail ToolOutputGuardrail triggered tripwire"
    ]
    assert plain.expected_session_errors == [
        "model call failed: TurnAborted: tool output guardrail 'block_sensitive_output' tripped"
    ]
    assert plain.tool_runs == [{"name": "get_user_data", "user_id": "user123"}]
    # A terminal outcome, never retried: one model call; the session's second model step
    # raises the tripwire before it calls the model, and each step ran once.
    assert len(plain.requests[""]) == 1
    assert session.model_attempts == 2
    # Deliberate: the tool ran, so the session notes it after the failed turn's message;
    # the SSN is in neither transcript.
    note = failure_note(
        '- get_user_data {"user_id":"user123"} -> failed: Tool call failed: tool output guardrail '
        "'block_sensitive_output' tripped (the tool ran; its output is withheld)"
    )
    assert "123-45-6789" not in json.dumps(session.history)
    assert_same_run(plain, session, session_history=[*plain.history, note])


async def test_an_input_tripwire_ends_the_turn_before_the_tool_runs(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``reject_sensitive_words`` raising instead of rejecting (not in the example)."""
    scenario = Scenario(
        name="tool-input-tripwire",
        build=tool_guardrail_examples.tool_guardrails_tripping,
        script=[ModelReply.call(ACME), ModelReply.say("never asked for")],
        turns=[SEND_ACME],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert (plain.errors[0] or "").startswith("ToolInputGuardrailTripwireTriggered")
    assert session.errors == [
        "model call failed: TurnAborted: tool input guardrail 'reject_sensitive_words' tripped"
    ]
    # The email was never sent, in either run; the guardrail ran once.
    assert plain.tool_runs == [] and session.tool_runs == []
    assert guardrail_runs(session.code_runs) == ["reject_sensitive_words"]
    assert len(plain.requests[""]) == 1
    assert session.model_attempts == 2
    note = failure_note(
        '- send_email {"to":"john@example.com","subject":"Introduction","body":"Introducing ACME corp."} '
        "-> failed: Tool call failed: tool input guardrail 'reject_sensitive_words' tripped (the tool did not run)"
    )
    assert_same_run(plain, session, session_history=[*plain.history, note])


async def test_an_approved_call_meets_its_input_guardrail_before_it_runs(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """``send_email(needs_approval=True)``: a person approves, then the guardrail blocks it."""
    scenario = Scenario(
        name="tool-guardrail-approved",
        build=tool_guardrail_examples.tool_guardrails_approved,
        script=[ModelReply.call(ACME), ModelReply.say("It was blocked.")],
        turns=[SEND_ACME],
        approvals=[True],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.asked == [("send_email", json.dumps(ACME.arguments, separators=(",", ":")))]
    assert plain.tool_runs == []
    assert guardrail_runs(plain.code_runs) == ["reject_sensitive_words"]
    assert plain.requests[""][1]["input"][-1]["output"] == BLOCKED
    assert_same_run(plain, session)


async def test_a_call_a_person_rejects_never_meets_its_guardrail(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="tool-guardrail-rejected",
        build=tool_guardrail_examples.tool_guardrails_approved,
        script=[ModelReply.call(WELCOME), ModelReply.say("Not sent.")],
        turns=[SEND_WELCOME],
        approvals=[False],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.code_runs == []
    assert plain.requests[""][1]["input"][-1]["output"] == "Tool execution was not approved."
    assert_same_run(plain, session)


async def test_an_agent_tools_input_guardrail_keeps_its_sub_agent_from_starting(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The guardrails of an agent used as a tool: the input guardrail in its tool step (the
    sub-agent never makes a model call), as plain never starts the nested run."""
    scenario = Scenario(
        name="agent-tool-input-guardrail",
        build=tool_guardrail_examples.agent_tool_guardrails,
        script=[
            ModelReply.call(
                ScriptedToolCall("call_es", "translate_to_spanish", {"input": "Introducing ACME corp."})
            ),
            ModelReply.say("I can't translate that."),
        ],
        turns=["Translate 'Introducing ACME corp.' to Spanish."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert len(plain.requests[""]) == 2
    assert plain.requests[""][1]["input"][-1]["output"] == BLOCKED
    assert guardrail_runs(plain.code_runs) == ["reject_sensitive_words"]
    assert_same_run(plain, session)


async def test_an_agent_tools_output_guardrail_meets_the_sub_agents_answer(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """The output guardrail runs on the nested run's answer, in the model step where the
    parent takes it, and rejects it as in plain."""
    scenario = Scenario(
        name="agent-tool-output-guardrail",
        build=tool_guardrail_examples.agent_tool_guardrails,
        script=[
            ModelReply.call(ScriptedToolCall("call_es", "translate_to_spanish", {"input": "Call 555-1234."})),
            ModelReply.say("Llama al 555-1234."),
            ModelReply.say("I can't share that."),
        ],
        turns=["Translate 'Call 555-1234.' to Spanish."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.requests[""][2]["input"][-1]["output"] == "The translation contains a phone number."
    assert guardrail_runs(plain.code_runs) == ["reject_sensitive_words", "reject_phone_numbers"]
    assert_same_run(plain, session)


async def test_a_sub_agents_tool_tripwire_is_the_agent_tools_answer(
    temporal_address: str, model_server: ScriptedModelServer, tmp_path: Path
) -> None:
    """A tripwire inside the nested run: the SDK's ``as_tool`` gives it to the agent tool's
    failure function, whose text the parent's model sees; the glossary never runs."""
    scenario = Scenario(
        name="sub-agent-tool-tripwire",
        build=tool_guardrail_examples.sub_agent_tool_tripping,
        script=[
            ModelReply.call(ScriptedToolCall("call_es", "translate_to_spanish", {"input": "A secret word."})),
            ModelReply.call(ScriptedToolCall("call_glossary", "lookup_glossary", {"word": "secret"})),
            ModelReply.say("I couldn't translate it."),
        ],
        turns=["Translate 'A secret word.' to Spanish."],
    )
    plain, session = await run_both(scenario, model_server, temporal_address, tmp_path)

    assert plain.tool_runs == []
    assert guardrail_runs(plain.code_runs) == ["no_secrets"]
    assert plain.requests[""][2]["input"][-1]["output"] == (
        "An error occurred while running the tool. Please try again."
    )
    assert_same_run(plain, session)
