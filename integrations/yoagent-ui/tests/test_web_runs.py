"""The run viewer in a real headless chromium: a GASP repository of three recorded runs
shows three timelines with their costs, tokens and cost per turn plotted, the files each
changed and its outcome; filters; a cassette; malformed records named by file and line;
a run of 10,000 turns paged. Each test fails on any console error."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect
from runs_testing import (
    MODEL,
    RUNS,
    huge_run_log,
    record_three_runs,
    run_async,
    run_cost,
    write_file,
)
from ui_testing import serve
from web_testing import Page

from yoagent.core import Agent, MockProvider
from yoagent.testing import RecordingProvider
from yoagent.ui.web import WebApp, to_web


def dollars(value: float) -> str:
    """As the page writes an amount."""
    return f"${value:.6f}" if value < 0.01 else f"${value:.4f}"


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_three_runs(tmp_path_factory.mktemp("gasp") / "agent")


def viewer(web: Page, *paths: Path) -> Iterator[str]:
    """The viewer of ``paths`` served; the page leaves it before it stops."""
    app: WebApp = to_web(None, runs=paths)
    with serve(app) as base:
        try:
            yield f"{base}/{app.token}/"
        finally:
            web.page.goto("about:blank")


def test_three_recorded_runs_show_three_timelines_with_their_costs(
    web: Page, three_runs: Path
) -> None:
    for url in viewer(web, three_runs):
        page = web.open(url, "runs")
        rows = page.locator(".run-list tbody tr")
        rows.nth(2).wait_for()
        assert rows.count() == 3
        shown = {
            rows.nth(i).locator(".task").text_content(): rows.nth(i).locator(".cost").text_content()
            for i in range(3)
        }
        assert shown == {task: dollars(run_cost(replies)) for task, replies in RUNS}
        web.shot("runs")
        for task, replies in RUNS:
            page.locator(".run-list tbody tr", has_text=task).click()
            detail = page.locator("#run-detail")
            detail.locator("h2", has_text=task).wait_for()
            assert detail.locator(".run-cost").text_content() == dollars(run_cost(replies))
            assert detail.locator(".timeline details.turn").count() == len(replies)
            assert detail.locator(".outcome").text_content() == "completed"
            writes = [
                r.tool_calls[0].arguments["path"]
                for r in replies
                if r.tool_calls and r.tool_calls[0].name == "write_file"
            ]
            assert detail.locator(".files li").all_text_contents() == writes
            lanes = detail.locator(".lane-cost").all_text_contents()
            assert [lane.split("· ")[1] for lane in lanes] == [
                dollars(run_cost([reply])) for reply in replies
            ]
        page.locator(".run-list tbody tr", has_text="read and fix").click()
        page.locator("details.turn").nth(1).locator("summary").click()
        web.shot("run")


def test_filters_narrow_the_list(web: Page, three_runs: Path) -> None:
    for url in viewer(web, three_runs):
        page = web.open(url, "runs")
        page.locator(".run-list tbody tr").nth(2).wait_for()
        cheapest = min(run_cost(replies) for _, replies in RUNS)
        rows = page.locator(".run-list tbody tr")
        page.fill("#f-min", str(cheapest * 1.5))
        expect(rows).to_have_count(2)
        page.fill("#f-min", "")
        page.fill("#f-text", "fix")
        expect(rows).to_have_count(1)
        page.fill("#f-text", "")
        page.select_option("#f-outcome", "completed")
        expect(rows).to_have_count(3)
        page.select_option("#f-model", "priced-model")
        page.fill("#f-max", "0")
        page.locator(".note", has_text="No run matches.").wait_for()


def test_a_cassette_opened_in_the_page_shows_its_run(web: Page, tmp_path: Path) -> None:
    replies = RUNS[0][1]
    cassette = tmp_path / "cassettes" / "parser.jsonl"

    async def record() -> None:
        recorder = RecordingProvider(MockProvider(list(replies)), cassette)
        agent = Agent.from_provider(recorder, MODEL, tools=[write_file])
        await agent.prompt("write the parser")

    run_async(record)
    for url in viewer(web):
        page = web.open(url, "runs")
        page.fill("#open-path", str(cassette))
        page.get_by_role("button", name="Open").click()
        page.locator(".run-list tbody tr").first.click()
        detail = page.locator("#run-detail")
        detail.locator("h2", has_text="write the parser").wait_for()
        assert detail.locator(".timeline details.turn").count() == 2
        assert detail.locator(".files li").all_text_contents() == ["parser.py"]
        assert detail.locator(".outcome").text_content() == "completed"


def test_malformed_records_show_the_file_and_line_never_a_traceback(
    web: Page, three_runs: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    (broken / "state").mkdir(parents=True)
    good = (three_runs / "state" / "events.jsonl").read_text().splitlines(keepends=True)
    (broken / "state" / "events.jsonl").write_text("".join([*good[:3], "{not json\n", *good[3:]]))
    cassette = tmp_path / "bad.jsonl"
    cassette.write_text('{"kind": "header", "format": "yoagent-cassette", "version": 1}\n[1, 2]\n')
    for url in viewer(web, broken, cassette):
        page = web.open(url, "runs")
        problem = page.locator(".problem").first
        problem.wait_for()
        log = broken / "state" / "events.jsonl"
        assert problem.text_content().startswith(f"{log}: line 4: not JSON")  # type: ignore[union-attr]
        assert page.locator(".run-list tbody tr").count() >= 1  # the rest was read
        web.shot("runs-malformed")
        page.locator(".source").nth(1).click()
        page.locator(".problem", has_text=f"{cassette}: line 2").wait_for()
        assert "Traceback" not in (page.locator("#runs-view").text_content() or "")
        page.fill("#open-path", str(tmp_path / "nowhere"))
        page.get_by_role("button", name="Open").click()
        page.locator(".problem", has_text="does not exist").wait_for()


def test_a_run_of_ten_thousand_turns_is_paged_and_stays_responsive(
    web: Page, tmp_path: Path
) -> None:
    huge = huge_run_log(tmp_path / "huge", 10_000)
    for url in viewer(web, huge):
        page = web.open(url, "runs")
        row = page.locator(".run-list tbody tr").first
        row.wait_for()
        started = time.monotonic()
        row.click()
        detail = page.locator("#run-detail")
        detail.locator("h2", has_text="a very long run").wait_for()
        opened = time.monotonic() - started
        assert detail.locator(".timeline details.turn").count() == 100  # a page, not 10,000
        assert "1–100 of 10,000 turns" in (detail.locator(".pager").text_content() or "")
        assert opened < 5, f"opening the run took {opened:.1f} s"
        started = time.monotonic()
        detail.get_by_role("button", name="Next").click()
        page.locator("details.turn[data-turn='101']").wait_for()
        assert time.monotonic() - started < 3
        box = detail.locator("canvas.plot").bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2)
        page.locator("details.turn[data-turn='10000']").wait_for()  # the plot jumps there
        assert page.evaluate("document.querySelectorAll('details.turn').length") == 100
        web.shot("run-huge")
