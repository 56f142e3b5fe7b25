"""The terminal chat in a pseudo-terminal: approvals, questions, images, Ctrl-C."""

from __future__ import annotations

import asyncio
import signal

import pexpect

from sessionflow.demo import ModelReply, ScriptedToolCall
from sessionflow.testing import FileGate
from tests.cli.conftest import Cli, expect_group, finish, ready_for_keys

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


def _session_id(child: pexpect.spawn[str]) -> str:
    return expect_group(child, r"New session (\S+); it starts with your first message")


def test_a_whole_chat_with_approvals_a_question_and_images(cli: Cli) -> None:
    cli.write_config()
    (cli.workspace / "chart.png").write_bytes(PNG)
    (cli.workspace / "notes.txt").write_text("not an image")
    with (cli.workspace / "huge.png").open("wb") as handle:
        handle.write(PNG)
        handle.truncate(3_750_001)
    cli.script(
        [
            ModelReply.call(
                ScriptedToolCall("c1", "publish_note", {"text": "first"}), text="Publishing it. "
            ),
            ModelReply.say("Published the first note.", chunks=["Published ", "the first ", "note."]),
            ModelReply.call(ScriptedToolCall("c2", "publish_note", {"text": "second"})),
            ModelReply.say("Fine, I did not publish it."),
            ModelReply.call(
                ScriptedToolCall("q1", "ask_user", {"question": "Which colour?", "choices": ["red", "blue"]})
            ),
            ModelReply.say("Blue it is."),
            ModelReply.say("I see 20 pictures."),
        ]
    )
    child = cli.spawn("chat", "-f", "scripted")
    session_id = _session_id(child)
    child.expect("you> ")
    child.sendline("publish the first note")
    child.expect_exact("[approval] publish_note")
    child.expect_exact('"text": "first"')
    child.expect_exact("approve? [y / n <reason>]")
    child.sendline("y")
    child.expect_exact('[tool] publish_note {"text": "first"}')
    child.expect_exact("[tool] publish_note succeeded")
    child.expect_exact("Published the first note.")
    child.expect("you> ")

    child.sendline("publish another")
    child.expect_exact("[approval] publish_note")
    child.expect_exact('"text": "second"')
    child.expect_exact("approve?")
    child.sendline("n not today")
    child.expect_exact("[tool] publish_note rejected: not today")
    child.expect_exact("Fine, I did not publish it.")
    child.expect("you> ")

    child.sendline("ask me something")
    child.expect_exact("[question] Which colour?")
    child.expect_exact("2. blue")
    child.expect_exact("answer (or a number; empty declines)>")
    child.sendline("2")
    child.expect_exact("Blue it is.")
    child.expect("you> ")

    child.sendline("/model huge")
    child.expect_exact('[model not changed] model_not_allowed at "/model" (allowed: scripted)')
    child.sendline("/image missing.png")
    child.expect_exact("[image not attached]")
    child.expect_exact("does not exist")
    child.sendline("/image notes.txt")
    child.expect_exact("notes.txt is not a PNG, JPEG, GIF or WebP image")
    child.sendline("/image huge.png")
    child.expect_exact("the limit is 3,750,000")
    for _ in range(20):
        child.sendline("/image chart.png")
        child.expect_exact("[image attached] chart.png (image/png, 72 B)")
    child.sendline("/image chart.png")
    child.expect_exact("a message carries at most 20 images")
    child.sendline("what do you see?")
    child.expect_exact("I see 20 pictures.")
    child.expect("you> ")
    child.sendline("/exit")
    child.expect_exact(f"Continue it with: sessionflow chat -f scripted -r {session_id}")
    assert finish(child) == 0

    assert (cli.workspace / "published.txt").read_text() == "first\n"
    requests = cli.requests()
    assert len(requests) == 7
    assert "not today" in requests[3].tool_results()["c2"]
    assert requests[5].tool_results()["q1"] == "blue"
    images = [
        part
        for message in requests[6].body["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]
    assert len(images) == 20
    assert images[0]["image_url"]["url"].startswith("data:image/png;base64,")


def test_ctrl_c_cancels_a_turn_then_exits(cli: Cli) -> None:
    cli.write_config(framework="scripted-text")
    (cli.workspace / "chart.png").write_bytes(PNG)
    cli.script([ModelReply.say("too late", delay_seconds=60), ModelReply.say("Quick answer.")])
    child = cli.spawn("chat", "-f", "scripted-text")
    session_id = _session_id(child)
    child.expect("you> ")
    child.sendline("/image chart.png")
    child.expect_exact("[image attached]")
    child.sendline("look at this")
    child.expect_exact("[not sent] this agent does not take images")
    child.expect("you> ")
    child.sendline("think slowly")
    cli.model_server.wait_for_requests(cli.key, 1, timeout=60)
    child.sendintr()
    child.expect_exact("cancelling the turn; press Ctrl-C again to exit")
    child.expect_exact("[cancelled] the turn was cancelled")
    child.expect("you> ")
    child.sendline("and now quickly")
    child.expect_exact("Quick answer.")
    child.expect("you> ")
    ready_for_keys(child)
    child.sendintr()  # Ctrl-C while idle leaves, as an interrupted command: 130
    child.expect_exact(f"Continue it with: sessionflow chat -f scripted-text -r {session_id}")
    assert finish(child) == 130
    requests = cli.requests()
    assert len(requests) == 2  # the image message was never sent
    assert requests[1].last_user_text() == "and now quickly"


def test_a_second_ctrl_c_during_a_turn_exits(cli: Cli) -> None:
    cli.write_config()
    cli.script([ModelReply.say("never", delay_seconds=60)])
    child = cli.spawn("chat", "-f", "scripted")
    session_id = _session_id(child)
    child.expect("you> ")
    child.sendline("think slowly")
    cli.model_server.wait_for_requests(cli.key, 1, timeout=60)
    child.sendintr()
    child.expect_exact("press Ctrl-C again to exit")
    child.sendintr()
    child.expect_exact(f"-r {session_id}")
    assert finish(child) == 130  # an exit code, not a death by SIGINT (finish checks)
    assert child.signalstatus is None or child.signalstatus != signal.SIGINT


def test_a_line_typed_while_the_agent_works_joins_the_turn(cli: Cli) -> None:
    cli.write_config(framework="scripted-gated")
    cli.script(
        [
            ModelReply.call(ScriptedToolCall("g1", "wait_at_gate", {"name": "g"})),
            ModelReply.say("Lisbon it is."),
        ]
    )
    gate = FileGate(cli.workspace / ".gates", "g")
    child = cli.spawn("chat", "-f", "scripted-gated")
    _session_id(child)
    child.expect("you> ")
    child.sendline("find me a flight")
    asyncio.run(gate.wait_until_reached(timeout=120))
    child.sendline("make it Lisbon")
    child.expect_exact("[you] make it Lisbon (joins the turn)")
    gate.release()
    child.expect_exact("Lisbon it is.")
    child.expect("you> ")
    child.sendline("/exit")
    assert finish(child) == 0
    requests = cli.requests()
    assert len(requests) == 2  # one turn: the line joined it, it did not start another
    assert requests[1].conversation()[-2:] == [("tool_result", "g1"), ("user", "make it Lisbon")]


def test_a_line_typed_during_the_last_model_step_starts_the_next_turn(cli: Cli) -> None:
    cli.write_config(framework="scripted-text")
    cli.script([ModelReply.say("first answer", delay_seconds=3), ModelReply.say("second answer")])
    child = cli.spawn("chat", "-f", "scripted-text")
    _session_id(child)
    child.expect("you> ")
    child.sendline("one")
    cli.model_server.wait_for_requests(cli.key, 1, timeout=60)
    child.sendline("two")
    # This framework does not declare steering: the line waits for the next turn, and says so.
    child.expect_exact("[you] two (queued for the next turn)")
    child.expect_exact("first answer")
    child.expect_exact("second answer")  # followed before the prompt comes back
    child.expect("you> ")
    child.sendline("/exit")
    assert finish(child) == 0
    requests = cli.requests()
    assert len(requests) == 2
    assert requests[1].last_user_text() == "two"
