"""The auditor's workbench in a real headless Chromium (Debian's package, driven by Playwright).

Grades three items by keyboard, reloads (the page resumes at the first ungraded item), checks
the grades in the CSV, and checks that a second tab is refused the sheet and cannot grade; then
the same on the audit sheet of ``chunklab-own answers`` on ``examples/own_docs`` (scripted test
backend), after which ``chunklab-own audit report`` renders from the sheet graded in the browser.
The driving program records itself as grader kind ``model:browser-test``, never as a person.
Chromium is the system one (``/usr/bin/chromium``, ``apt-get install chromium``; Playwright never
downloads a browser here); missing, the test fails, it does not skip.
"""

from __future__ import annotations

import shutil
import threading

import pytest
from playwright.sync_api import sync_playwright

from chunklab_core.audit.sheet_file import SheetFile
from chunklab_core.audit.workbench import Workbench, make_server, open_sheet, page_address

from test_own_answers import run_answers, scripted  # noqa: F401  (the scripted-backend fixture)
from test_workbench import write_sheet

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def own_docs_sheet(tmp_path):
    """The blind audit sheet of chunklab-own answers on examples/own_docs (scripted backend), 8 items."""
    from chunklab_core.own.audit import audit_paths
    from chunklab_core.own.cli import main

    assert run_answers(tmp_path / "answers") == 0
    assert main(["audit", "draw", "--answers", str(tmp_path / "answers"), "--n", "8"]) == 0
    return audit_paths(tmp_path / "answers")["sheet"]


@pytest.mark.slow
@pytest.mark.parametrize("which", ["synthetic", "own_docs"])
def test_grade_three_items_by_keyboard_reload_and_second_tab_refused(tmp_path, scripted, which):  # noqa: F811
    from chunklab_core.own.cli import main

    sheet = write_sheet(tmp_path / "sheet.csv", rows=5) if which == "synthetic" else own_docs_sheet(tmp_path)
    n_rows = len(SheetFile.read(sheet).rows)
    bench = Workbench(open_sheet(sheet), "browser-test", grader_kind="model:browser-test")
    server = make_server(bench)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = page_address(server, bench)  # the secret in the fragment, as the command prints it
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            context = browser.new_context()
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector("body[data-index='0']")
            if which == "synthetic":
                assert page.locator("#passage mark").count() == 2  # "Ref 1" and "ALT   1" highlighted
                assert "<script>alert(1)</script>" in page.locator("#passage").text_content()  # text, not code
            assert page.locator("#verdicts").text_content() == ""  # blind
            for key, graded in (("c", 1), ("w", 2), ("p", 3)):
                page.keyboard.press(key)
                page.wait_for_selector(f"body[data-graded='{graded}'][data-index='{graded}']")
            page.reload()
            page.wait_for_selector("body[data-graded='3'][data-index='3']")  # resumes at item 4
            assert f"3 graded, {n_rows - 3} to go" in page.locator("#progress").text_content()

            rows = SheetFile.read(sheet).rows
            assert [r["grade"] for r in rows] == ["correct", "wrong", "partial"] + [""] * (n_rows - 3)
            assert {r["grader_kind"] for r in rows[:3]} == {"model:browser-test"}
            assert rows[0]["grader"] == "browser-test"

            assert bench.secret not in page.content() and "#" not in page.url  # fragment read, then dropped
            second = context.new_page()
            second.goto(url)
            second.wait_for_selector("body[data-refused='1']")
            assert "another browser tab" in second.locator("#message").text_content()
            second.keyboard.press("c")
            second.wait_for_timeout(300)
            assert SheetFile.read(sheet).rows[3]["grade"] == ""  # the refused tab changed nothing
            page.keyboard.press("c")  # the first tab still grades
            page.wait_for_selector("body[data-graded='4']")
            assert SheetFile.read(sheet).rows[3]["grade"] == "correct"
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    if which == "own_docs":  # the audit report renders from the sheet graded in the browser
        assert main(["audit", "report", "--answers", str(sheet.parent.parent), "--resamples", "300"]) == 0
        report = (sheet.parent / "report.md").read_text()
        assert "browser-test (model:browser-test)" in report and "4 of 8 sampled items graded" in report
