"""The web console in a real browser (headless Chromium) against the real API stack.

Each test logs in through the one-time URL, drives the console as a person would, and
checks what the person sees and what really happened (the invocation log). Screenshots of
the main views, light and dark, go to the test's own folder, and to docs/server/screenshots/
when SESSIONFLOW_UPDATE_SCREENSHOTS=1.
"""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, expect

from sessionflow.testing import wait_until
from sessionflow_server import ServerConfig
from tests.server.browser import Console, browser, needs_chromium, open_console
from tests.server.conftest import Api, ApiFactory, with_deadline

REFUND: dict[str, object] = {"id": "c1", "name": "refund", "arguments": {"order": 7}}
SCRIPT = "<script>alert(1)</script>"
IMAGE = '<img src=x onerror="alert(2)">'

pytestmark = needs_chromium
__all__ = ["browser"]  # the fixture, imported so the tests here can ask for it


async def _console(browser: Browser, api: Api, tmp_path: Path) -> Console:
    return await open_console(browser, api, tmp_path)


async def test_log_in_start_watch_the_stream_and_approve_a_write_once(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(
        timings=with_deadline(3600), config=ServerConfig(new_session_id=lambda: "ui-flow")
    )
    api.script(
        "ui-flow",
        [
            [
                # Held a moment so the worker (another process) sends its delta batch.
                {"tool_calls": [REFUND], "deltas": ["Let me ", "refund that"], "delay_after_deltas": 1.0},
                {"text": "Order 7 is refunded."},
            ]
        ],
        {"refund": {"effect": "non_idempotent_write", "output": "refund ok"}},
    )
    console = await _console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    # The one-time code left the address bar; the token is in sessionStorage only.
    assert "code=" not in page.url
    assert await page.evaluate("sessionStorage.getItem('sessionflow.token')")
    assert await page.evaluate("document.cookie") == ""
    assert await page.evaluate("localStorage.length") == 0
    await expect(page.locator("main h1")).to_have_text("Sessions")

    await page.fill("#new-message", "Please refund order 7")
    await page.click("#start")
    await expect(page.locator("main h1")).to_have_text("ui-flow")
    await expect(page.locator("#transcript")).to_contain_text("Please refund order 7")
    # The model's streamed text arrives while the turn waits for the approval.
    await expect(page.locator("main")).to_contain_text("Let me refund that")
    approval = page.locator("#pending .interrupt")
    await expect(approval).to_contain_text("refund")
    await expect(approval.locator(".arguments")).to_contain_text('"order"')
    await expect(approval.locator(".countdown")).to_contain_text("left")
    # The step ended (model_step_completed): its durable text replaced the live text, once.
    await expect(page.locator("#transcript .msg.step .md")).to_have_text("Let me refund that")
    await expect(page.locator("#live .msg")).to_have_count(0)
    assert (await page.locator("main").inner_text()).count("Let me refund that") == 1
    await console.screenshot("transcript-approval")

    await page.click("#nav-inbox")
    await expect(page.locator("main .interrupt")).to_contain_text("refund")
    await expect(page.locator("#inbox-count")).to_have_text("1")
    await console.screenshot("approvals-inbox-refund")
    await page.click("#nav-sessions")
    row = page.locator("#sessions li[data-session='ui-flow']")
    await expect(row).to_contain_text("1 pending")
    await console.screenshot("sessions-one-waiting")

    assert api.log.count("tool", "refund") == 0
    await row.locator("a.title").click()
    # A double click approves once, and says nothing about "already resolved".
    await page.locator("#pending .approve").dblclick()
    await expect(page.locator("#transcript")).to_contain_text("Order 7 is refunded.")
    await expect(page.locator(".error:not(:empty)")).to_have_count(0)
    await expect(page.locator("#session-state")).to_have_text("idle")
    await expect(page.locator("#pending .interrupt")).to_have_count(0)
    await expect(page.locator("#live .msg")).to_have_count(0)
    await console.screenshot("transcript-refunded")
    assert api.log.count("tool", "refund") == 1
    assert api.seen("ui-flow", 2)[-1] == "refund ok"
    assert console.dialogs == [] and console.errors == []


async def test_markup_in_a_model_reply_and_a_tool_output_renders_as_text(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory()
    reply = f"{SCRIPT} and {IMAGE}"
    found = f"found {IMAGE} near {SCRIPT}"
    lookup = {"id": "t1", "name": "lookup", "arguments": {"query": SCRIPT}}
    api.script(
        "ui-xss",
        [[{"tool_calls": [lookup]}, {"text": reply, "deltas": [SCRIPT, " and ", IMAGE]}]],
        {"lookup": {"effect": "read", "output": found}},
    )
    created = await api.post("/api/v1/sessions", {"session_id": "ui-xss", "message": f"say {IMAGE}"})
    assert created.status_code == 201
    console = await _console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-xss")
    await expect(page.locator("#transcript .msg.assistant .md").last).to_have_text(reply)
    await expect(page.locator("#transcript .msg.user")).to_have_text(f"say {IMAGE}")
    await expect(page.locator("#transcript .tool .tool-output")).to_have_text(found)
    main = page.locator("main")
    await expect(main.locator("img")).to_have_count(0)
    await expect(main.locator("script")).to_have_count(0)
    await console.screenshot("markup-as-text")
    assert console.dialogs == [] and console.errors == []


ASK: dict[str, object] = {"id": "q1", "name": "ask", "arguments": {"question": "Which colour?"}}


async def test_reject_with_a_reason_the_model_sees_and_answer_a_question(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(timings=with_deadline(3600))
    api.script(
        "ui-rej",
        [[{"tool_calls": [REFUND]}, {"text": "Not refunding, then."}]],
        {"refund": {"effect": "non_idempotent_write"}},
    )
    api.script(
        "ui-ask",
        [[{"tool_calls": [ASK]}, {"text": "Teal it is."}]],
        {"ask": {"effect": "read", "question": True, "returns_answer": True}},
    )
    for session_id in ("ui-rej", "ui-ask"):
        created = await api.post("/api/v1/sessions", {"session_id": session_id, "message": "go"})
        assert created.status_code == 201
    console = await _console(browser, api, tmp_path)
    page = console.page
    await console.log_in()

    await page.goto(f"{api.url}/#/s/ui-rej")
    await page.locator("#pending .reason").fill("too risky")
    await page.locator("#pending .reject").click()
    await expect(page.locator("#transcript")).to_contain_text("Not refunding, then.")
    assert api.log.count("tool", "refund") == 0
    assert api.seen("ui-rej", 2)[-1] == "Tool call rejected by the user: too risky"

    await page.goto(f"{api.url}/#/s/ui-ask")
    await expect(page.locator("#pending .question")).to_have_text("Which colour?")
    await console.screenshot("question")
    await page.locator("#pending .answer").fill("teal")
    await page.locator("#pending .answer-button").click()
    await expect(page.locator("#transcript")).to_contain_text("Teal it is.")
    assert api.seen("ui-ask", 2)[-1] == "the user answered: teal"
    assert console.dialogs == [] and console.errors == []


async def test_double_texting_interrupt_then_fork_at_turn_one(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    from sessionflow.testing import FileGate
    from tests.server.helpers import idle_after

    api: Api = await api_factory()
    api.script(
        "ui-dt",
        [[{"text": "first answer"}], [{"gate": "ui-dt", "text": "never"}], [{"text": "about the interrupt"}]],
    )
    assert (await api.post("/api/v1/sessions", {"session_id": "ui-dt", "message": "q1"})).status_code == 201
    await idle_after(api, "ui-dt", 1)
    console = await _console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-dt")
    await expect(page.locator("#transcript")).to_contain_text("first answer")

    await page.fill("#message", "q2")
    await page.click("#send button")
    await FileGate(api.state_dir, "ui-dt").wait_until_reached()
    await page.fill("#message", "instead")
    await page.select_option("#policy", "interrupt")
    await page.click("#send button")
    await expect(page.locator("#transcript")).to_contain_text("about the interrupt")
    assert "never" not in await page.locator("#transcript").inner_text()
    assert "instead" in api.seen("ui-dt", 3)

    await page.fill("#fork-turn", "1")
    await page.click("#fork")
    await expect(page.locator("#session-meta")).to_contain_text("forked from ui-dt at turn 1")
    forked = await page.locator("#transcript").inner_text()
    assert "q1" in forked and "first answer" in forked and "instead" not in forked
    await console.screenshot("fork")
    fork_id = await page.evaluate("decodeURIComponent(location.hash.slice(4))")
    assert fork_id != "ui-dt"
    # In the sessions list the fork is drawn under the session it came from.
    await page.click("#nav-sessions")
    parent = page.locator("#sessions > li[data-session='ui-dt']")
    await expect(parent.locator(f".forks li[data-session='{fork_id}']")).to_be_visible(timeout=15_000)
    await expect(page.locator(f"#sessions > li[data-session='{fork_id}']")).to_have_count(0)
    await console.screenshot("sessions-fork")
    assert console.dialogs == [] and console.errors == []


async def test_a_reload_mid_turn_resumes_the_stream_after_the_last_event(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(timings=with_deadline(3600))
    api.script(
        "ui-reload",
        [
            [
                {"tool_calls": [REFUND], "deltas": ["part one"], "delay_after_deltas": 1.0},
                {"text": "All done."},
            ]
        ],
        {"refund": {"effect": "non_idempotent_write", "output": "ok"}},
    )
    created = await api.post("/api/v1/sessions", {"session_id": "ui-reload", "message": "go"})
    assert created.status_code == 201
    console = await _console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-reload")
    await expect(page.locator("#pending .approve")).to_be_visible()

    # The console notes the offset as it handles each event, which may be just after it
    # draws the approval: wait for the note rather than read it once.
    # Polled from here: `wait_for_function` compiles its string with `new Function`, which
    # the console's CSP (no 'unsafe-eval') refuses.
    async def noted() -> str | None:
        value = await page.evaluate("sessionStorage.getItem('sessionflow.last-event.ui-reload')")
        return value if value is not None and int(value) > 0 else None

    last = await wait_until("the console notes the last event's offset", noted, timeout=15)

    resumed: list[str | None] = []
    page.on(
        "request",
        lambda request: (
            resumed.append(request.headers.get("last-event-id"))
            if request.url.endswith("/sessions/ui-reload/events")
            else None
        ),
    )
    await page.reload()
    await expect(page.locator("#pending .approve")).to_be_visible()
    await expect(page.locator("#transcript")).to_contain_text("go")
    await page.locator("#pending .approve").click()
    await expect(page.locator("#transcript")).to_contain_text("All done.")
    assert resumed and resumed[0] is not None and int(resumed[0]) >= int(last)
    assert api.log.count("tool", "refund") == 1
    assert console.dialogs == [] and console.errors == []


async def test_a_retried_model_steps_text_replaces_the_failed_attempts_partial_text(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    api: Api = await api_factory(config=ServerConfig(new_session_id=lambda: "ui-retry"))
    # Attempt 1 streams a partial answer, holds it a moment (so the worker, another process,
    # sends its delta batch), then fails; attempt 2 streams the real answer and holds it too.
    api.script(
        "ui-retry",
        [
            [
                {
                    "text": "The clean answer.",
                    "deltas_by_attempt": {"1": ["A partial ", "first try"], "2": ["The clean ", "answer."]},
                    "delay_after_deltas": 4.0,
                    "fail_attempts": 1,
                }
            ]
        ],
    )
    console = await _console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.fill("#new-message", "Answer me")
    await page.click("#start")
    live = page.locator("#live")
    await expect(live).to_contain_text("A partial first try", timeout=30_000)
    await expect(live).to_contain_text("The clean answer.", timeout=30_000)
    # Replaced, not appended: the failed attempt's text is gone while the turn still runs.
    assert "partial" not in await live.inner_text()
    await expect(page.locator("#transcript")).to_contain_text("The clean answer.", timeout=30_000)
    await expect(page.locator("#live .msg")).to_have_count(0)
    assert "partial" not in await page.locator("main").inner_text()
    assert [entry["attempt"] for entry in api.log.entries("model", session="ui-retry")] == [1, 2]
    assert console.dialogs == [] and console.errors == []


async def test_steer_from_the_send_box_joins_the_running_turn(
    api_factory: ApiFactory, browser: Browser, tmp_path: Path
) -> None:
    from sessionflow.testing import FileGate

    api: Api = await api_factory()
    api.script(
        "ui-st",
        [
            [
                {"tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"q": "flights"}}]},
                {"text": "Lisbon it is"},
            ]
        ],
        {"lookup": {"effect": "read", "output": "3 flights", "gate": "ui-st"}},
    )
    assert (
        await api.post("/api/v1/sessions", {"session_id": "ui-st", "message": "find a flight"})
    ).status_code == 201
    console = await _console(browser, api, tmp_path)
    page = console.page
    await console.log_in()
    await page.goto(f"{api.url}/#/s/ui-st")
    await FileGate(api.state_dir, "ui-st").wait_until_reached()

    await page.fill("#message", "make it Lisbon")
    await page.select_option("#policy", "steer")
    await page.click("#send button")
    await expect(page.locator("#queued")).to_contain_text(
        "1 message to join the running turn at its next model step"
    )
    FileGate(api.state_dir, "ui-st").release()
    await expect(page.locator("#transcript")).to_contain_text("Lisbon it is")
    await expect(page.locator("#queued")).to_be_hidden()
    transcript = await page.locator("#transcript").inner_text()
    assert transcript.index("make it Lisbon") < transcript.index("Lisbon it is")
    # One turn: the model's second request ends with the tool's result and the steered message.
    assert api.seen("ui-st", 2)[-2:] == ["3 flights", "make it Lisbon"]
    assert api.log.count("model", session="ui-st") == 2
    assert console.dialogs == [] and console.errors == []
