"""The web app's chat in a real headless chromium, with the scripted model server behind
the agent: streamed text, a tool call as it runs, a held call answered in the browser
(deny with a reason, allow, edit then allow), Stop, a sub-agent nested in its call, and
the page at phone width driven by the keyboard. Each test fails on any console error."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from ui_model_server import ModelServer
from ui_testing import agent_factory, serve, wait_until
from web_testing import Page

from yoagent.ui.web import WebApp, to_web


@pytest.fixture
def app(model_server: ModelServer) -> WebApp:
    return to_web(agent_factory(model_server.url))


@pytest.fixture
def url(app: WebApp) -> Iterator[str]:
    with serve(app) as base:
        yield f"{base}/{app.token}/"


IDLE = "() => !document.querySelector('#send').disabled"


def send(page: Any, text: str) -> None:
    # Enter does nothing until the run before has ended and its thread is read back.
    page.wait_for_function(IDLE)
    page.fill("#prompt", text)
    page.press("#prompt", "Enter")


def until_held(page: Any, held: list[Any]) -> bool:
    """Wait (up to 30 s) until a held route has caught a request; whether one did."""
    for _ in range(1500):
        if held:
            return True
        page.wait_for_timeout(20)
    return bool(held)


def last_tool_result(model_server: ModelServer) -> str:
    """What the model last read as a tool's result."""
    for request in reversed(model_server.requests):
        message = request["messages"][-1]
        if message["role"] == "tool":
            return str(message["content"])
    raise AssertionError("the model never read a tool result")


def test_a_prompt_streams_its_reply_with_reasoning_collapsed(web: Page, url: str) -> None:
    page = web.open(url)
    send(page, "hello")
    reply = page.locator(".msg.assistant").last
    reply.get_by_text("Hello there!").wait_for()
    reasoning = page.locator("details.reasoning")
    assert reasoning.count() == 1 and not reasoning.evaluate("el => el.open")
    assert reasoning.locator(".text").text_content() == "Let me think."
    assert page.locator("#cost").text_content() == "$0.0000 + unpriced"  # no prices known
    web.shot("chat")


def test_text_shows_while_it_streams_and_stop_cancels_the_run(
    web: Page, url: str, model_server: ModelServer
) -> None:
    model_server.hung_up.clear()
    page = web.open(url)
    send(page, "slow")
    reply = page.locator(".msg.assistant").last
    ticks = "(document.querySelector('.msg.assistant')?.textContent || '').split('tick')"
    page.wait_for_function(f"() => {ticks}.length > 4")
    shown = reply.text_content() or ""
    assert page.locator("#stop").is_enabled()  # still running: the text came as it streamed
    page.keyboard.press("Escape")  # Stop, from the keyboard
    page.get_by_text("Stopped.").wait_for()
    assert wait_until(model_server.hung_up.is_set)  # the model request was cancelled
    stopped = reply.text_content() or ""
    assert len(shown) <= len(stopped) < len("tick " * 400)
    time.sleep(0.3)
    assert reply.text_content() == stopped  # nothing more arrives
    page.wait_for_function(IDLE)  # the stopped run's thread is read back, then Send is back
    assert not page.locator("#stop").is_enabled()
    send(page, "and now?")  # the conversation goes on after a stop (the model reads the
    # stop marker and the new prompt as one user turn: the scripted model echoes them)
    page.locator(".msg.assistant", has_text="and now?").wait_for()


def test_a_tool_call_appears_with_its_arguments_and_completes(web: Page, url: str) -> None:
    page = web.open(url)
    send(page, "weather Paris")
    card = page.locator(".tool").first
    card.locator(".status.done").wait_for()
    assert card.locator(".tool-name").text_content() == "get_weather"
    assert json.loads(card.locator("details").first.locator("pre").text_content() or "") == {
        "city": "Paris"
    }
    assert "Sunny in Paris" in (card.locator("details").nth(1).text_content() or "")
    page.get_by_text("Result: Sunny in Paris").wait_for()


def test_a_prompt_waits_until_the_run_before_is_read_back(
    web: Page, url: str, model_server: ModelServer
) -> None:
    """Between a run's end and the page reading its thread back, Enter sends nothing: a
    prompt sent then would go out on the history from before that run."""
    page = web.open(url)
    held: list[Any] = []
    release = False

    def hold(route: Any) -> None:
        if release:
            route.continue_()
        else:
            held.append(route)

    page.route("**/api/threads/*", hold)
    send(page, "hello")
    page.get_by_text("Hello there!").wait_for()
    assert until_held(page, held), "the page never asked for the thread"
    requests = len(model_server.requests)
    assert page.locator("#send").is_disabled()
    page.fill("#prompt", "too soon")
    page.press("#prompt", "Enter")
    page.wait_for_timeout(300)
    assert page.locator(".msg.user").count() == 1  # not sent, and not lost:
    assert page.input_value("#prompt") == "too soon"
    assert len(model_server.requests) == requests
    release = True
    for route in held:
        route.continue_()
    page.wait_for_function(IDLE)
    page.press("#prompt", "Enter")
    page.locator(".msg.user", has_text="too soon").wait_for()
    page.locator(".msg.assistant").nth(1).wait_for()
    sent = model_server.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"][-2:] == ["hello", "too soon"]


def test_a_new_chat_begun_while_the_last_run_is_read_back_starts_empty(
    web: Page, url: str, model_server: ModelServer
) -> None:
    page = web.open(url)
    held: list[Any] = []
    release = False

    def hold(route: Any) -> None:
        if release:
            route.continue_()
        else:
            held.append(route)

    page.route("**/api/threads/*", hold)
    send(page, "hello")
    page.get_by_text("Hello there!").wait_for()
    assert until_held(page, held), "the page never asked for the thread"
    page.click("#new-chat")
    release = True
    for route in held:
        route.continue_()  # the old thread's answer arrives after the new chat began
    send(page, "fresh start")
    page.locator(".msg.assistant").first.wait_for()
    sent = model_server.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["fresh start"]


def test_a_thread_not_read_back_is_read_again_before_the_next_prompt(
    web: Page, url: str, model_server: ModelServer
) -> None:
    """When the thread cannot be read back after a run (the server answers 500), the page
    says so and stays usable; the next prompt reads it first and goes out on the whole
    history."""
    page = web.open(url)
    failures = [1]

    def flaky(route: Any) -> None:
        if failures:
            failures.pop()
            route.fulfill(status=500, content_type="application/json", body='{"error": "boom"}')
        else:
            route.continue_()

    page.route("**/api/threads/*", flaky)
    send(page, "hello")
    page.get_by_text("The conversation could not be read back (boom)").wait_for()
    send(page, "and again")
    page.locator(".msg.assistant").nth(1).wait_for()
    sent = model_server.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"][-2:] == ["hello", "and again"]
    # chromium logs the 500 it was given on purpose; nothing else may be logged
    expected = [e for e in web.errors if "status of 500" in e]
    assert len(expected) == 1
    web.errors[:] = [e for e in web.errors if e not in expected]


def test_what_is_typed_while_a_stale_thread_is_read_is_what_is_sent(
    web: Page, url: str, model_server: ModelServer
) -> None:
    page = web.open(url)
    answers: list[str] = ["fail", "hold"]
    held: list[Any] = []

    def route(request: Any) -> None:
        what = answers.pop(0) if answers else "go"
        if what == "fail":
            request.fulfill(status=500, content_type="application/json", body='{"error": "boom"}')
        elif what == "hold":
            held.append(request)
        else:
            request.continue_()

    page.route("**/api/threads/*", route)
    send(page, "hello")
    page.get_by_text("The conversation could not be read back (boom)").wait_for()
    send(page, "and")  # reads the thread first: held
    assert until_held(page, held), "the page never read the thread again"
    assert not page.locator("#stop").is_enabled()  # a read-back has nothing to stop
    page.fill("#prompt", "and then some")  # typing goes on meanwhile
    for request in held:
        request.continue_()
    page.locator(".msg.user", has_text="and then some").wait_for()
    page.locator(".msg.assistant").nth(1).wait_for()
    sent = model_server.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"][-2:] == ["hello", "and then some"]
    web.errors[:] = [e for e in web.errors if "status of 500" not in e]


def test_a_long_tool_result_starts_collapsed(web: Page, url: str) -> None:
    page = web.open(url)
    send(page, "weather " + "Y" * 600)
    card = page.locator(".tool").first
    card.locator(".status.done").wait_for()
    result = card.locator("details").nth(1)
    assert not result.evaluate("el => el.open")
    result.locator("summary").click()
    assert result.evaluate("el => el.open")


def test_a_held_call_denied_with_a_reason_does_not_run(
    web: Page, url: str, model_server: ModelServer
) -> None:
    page = web.open(url)
    send(page, 'call deploy {"service": "web"}')
    approval = page.locator(".approval").first
    approval.wait_for()
    assert "deploys need a person's approval" in (approval.text_content() or "")
    assert json.loads(approval.locator("pre").text_content() or "") == {"service": "web"}
    assert page.evaluate("document.activeElement.textContent") == "Allow"  # focus moved there
    web.shot("approval")
    approval.get_by_placeholder("Why not? (the agent reads it)").fill("not on a Friday")
    approval.get_by_role("button", name="Deny").click()
    page.get_by_text("Result: Tool call denied: not on a Friday").wait_for()
    assert last_tool_result(model_server) == "Tool call denied: not on a Friday"
    assert page.locator(".tool .status").last.text_content() == "denied"


def test_a_held_call_allowed_runs_and_an_edited_one_runs_as_edited(
    web: Page, url: str, model_server: ModelServer
) -> None:
    page = web.open(url)
    send(page, 'call deploy {"service": "web"}')
    page.locator(".approval").get_by_role("button", name="Allow", exact=True).click()
    page.get_by_text("Result: web deployed").wait_for()
    send(page, 'call deploy {"service": "web"}')
    approval = page.locator(".approval").first
    approval.get_by_role("button", name="Edit…").click()
    editor = approval.locator("textarea")
    editor.fill("not json")
    approval.get_by_role("button", name="Allow edited").click()
    assert "must be" in (approval.get_by_role("alert").text_content() or "") or "JSON" in (
        approval.get_by_role("alert").text_content() or ""
    )
    editor.fill('{"service": "api"}')
    approval.get_by_role("button", name="Allow edited").click()
    page.get_by_text("Result: api deployed").wait_for()
    assert last_tool_result(model_server) == "api deployed"


def test_a_sub_agent_runs_nested_in_its_call(web: Page, url: str) -> None:
    page = web.open(url)
    send(page, 'call helper {"task": "weather Oslo"}')
    helper = page.locator(".tool", has=page.locator(".tool-name", has_text="helper")).first
    nested = helper.locator(".subagent")
    nested.locator(".tool-name", has_text="get_weather").wait_for()
    nested.get_by_text("Result: Sunny in Oslo").wait_for()
    helper.locator(":scope > .tool-head .status.done").wait_for()
    web.shot("sub-agent")


def test_phone_width_fits_and_the_keyboard_drives_the_chat(
    browser: Any, url: str, screenshots: Any
) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    web = Page(context.new_page(), screenshots)
    try:
        page = web.open(url)
        assert page.evaluate("document.activeElement.id") == "prompt"  # ready to type
        page.keyboard.type("weather Rome")
        page.keyboard.press("Enter")
        page.get_by_text("Result: Sunny in Rome").wait_for()
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0
        page.wait_for_function(IDLE)  # the run has ended: Send is enabled again
        page.keyboard.press("Tab")  # from the prompt to its Send button
        assert page.evaluate("document.activeElement.id") == "send"
        web.shot("chat-phone")
    finally:
        context.close()
    assert web.errors == []
