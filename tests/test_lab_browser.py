"""The lab page in a real headless Chromium (Debian's package, driven by Playwright), issue 39.

Computed once, checked twice: the page's script computes the ranking metrics, re-orders the
reranked prefix and estimates the footprint; these tests set its controls (by mouse and by
keyboard), read the numbers it shows and compare them with the package's functions on the same
inputs (``reports.lab.reference_metrics`` through ``evaluation.ranking_metrics`` and
``rerank.stage``; ``reports.lab.footprint_estimate``), for at least three states per panel. The
budget panel's numbers are recomputed here through ``evaluation.budget.recall_at_budget`` and the
interval functions one cell at a time (the lab computes all cells at once), and at post 02's
budgets they are the post's own table, ``data/02_budget.csv``. A copied link restores the
view, Reset returns to the defaults, Export CSV writes the shown table, and hostile text in the
data shows as text. The data are built from the recorded runs (replayed) on a small
configuration (SQuAD only, a few strategies) to keep the tier's time down.

``LAB_SCREENSHOTS=DIR`` also writes a PNG of each panel of the page (to look at).
Chromium is the system one (``/usr/bin/chromium``); missing, the test fails, it does not skip.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import sync_playwright

from chunklab_core.core.paths import PROJ_ROOT
from chunklab_core.reports import lab

from test_lab import small_data

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
CONFIG = dict(ranking_corpora=("squad",), ranking_strategies=("fixed_500", "recursive_500"), ranking_questions=25,
              budget_corpora=("squad",), budget_strategies=("fixed_500", "fixed_1000"),
              footprint_corpora=("squad",))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(folder with lab.html, its data, the per-question budget tables) on the small configuration."""
    os.environ.setdefault("CHUNKLAB_DATA_MIRROR", str(PROJ_ROOT.parent / "shared" / "data"))
    config = lab.LabConfig(**CONFIG)
    previous = os.environ.get("CHUNKLAB_RUNS")
    os.environ["CHUNKLAB_RUNS"] = "replay"
    try:
        tables = lab.budget_tables(config)
        data = {"ranking": lab.ranking_panel(config), "budget": lab.budget_panel(config, tables),
                "footprint": lab.footprint_panel(config)}
    finally:
        os.environ.pop("CHUNKLAB_RUNS") if previous is None else os.environ.__setitem__("CHUNKLAB_RUNS", previous)
    folder = tmp_path_factory.mktemp("lab")
    lab.write_lab(folder, data, '<a href="index.html">All posts</a>')
    return folder, data, tables, config


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield browser
        browser.close()


def open_page(browser, url: str):
    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    return page, errors


def shown_metrics(page) -> dict:
    return {key: float(page.locator(f"#m-{key}").get_attribute("data-value"))
            for key in ("precision", "recall", "mrr", "ndcg")}


def python_metrics(data, state) -> dict:
    cell = next(c for c in data["ranking"]["cells"] if c["corpus"] == state["rc"] and c["strategy"] == state["rs"])
    ranks = cell["questions"][state["q"]]["ranks"]
    grades, scores = [r[1] for r in ranks], [r[2] for r in ranks]
    found = sum(g >= state["g"] for g in grades)
    return lab.reference_metrics(grades, scores, state["k"], state["g"], max(state.get("t", 0), found, 1), state["d"])


def as_shown(x: float) -> str:
    """How the page writes a budget value: the posts' 5 decimals (``float_format="%.5f"``), shown to 3."""
    return f"{float(f'{x:.5f}'):.3f}"


def set_number(page, selector: str, value) -> None:
    page.locator(selector).fill(str(value))
    page.locator(selector).press("Tab")  # change fires when the field is left, as a reader's edit


@pytest.mark.slow
def test_ranking_panel_equals_the_package_in_every_state(built, browser):
    folder, data, _, _ = built
    page, errors = open_page(browser, (folder / lab.PAGE).as_uri())
    cells = data["ranking"]["cells"]
    states = [
        {"rc": "squad", "rs": "fixed_500", "q": 0, "k": 5, "g": 1, "d": 0},
        {"rc": "squad", "rs": "fixed_500", "q": 3, "k": 10, "g": 1, "d": 10},
        {"rc": "squad", "rs": "recursive_500", "q": 7, "k": 3, "g": 2, "d": 20},
        {"rc": "squad", "rs": "recursive_500", "q": 11, "k": 1, "g": 1, "d": 5, "t": 6},
    ]
    for state in states:
        page.select_option("#r-strategy", state["rs"])
        page.select_option("#r-question", str(state["q"]))
        page.select_option("#r-grade", str(state["g"]))
        set_number(page, "#r-k", state["k"])
        page.select_option("#r-depth", str(state["d"]))
        if "t" in state:
            set_number(page, "#r-total", state["t"])
        expected = python_metrics(data, state)
        got = shown_metrics(page)
        for key in got:
            assert got[key] == pytest.approx(expected[key], abs=1e-12), (state, key)
            assert page.locator(f"#m-{key}").text_content() == f"{expected[key]:.3f}"
        cell = next(c for c in cells if c["strategy"] == state["rs"])
        ranks = cell["questions"][state["q"]]["ranks"]
        first_stage_ranks = [int(t) for t in page.locator("#r-table tbody td:nth-child(2)").all_text_contents()]
        assert [r - 1 for r in first_stage_ranks] == expected["order"]
        assert page.locator("#r-table tbody tr.inside").count() == min(state["k"], len(ranks))
        assert page.locator("#r-reading").text_content().strip()
    # the k and depth controls by keyboard: focus and arrow keys
    page.focus("#r-k")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Tab")
    assert shown_metrics(page) == pytest.approx(
        {k: v for k, v in python_metrics(data, {**states[-1], "k": 2}).items() if k != "order"})
    assert "k 1 → 2" in page.locator("#r-reading").text_content()
    assert not errors


@pytest.mark.slow
def test_budget_panel_is_post02s_table_and_the_package(built, browser):
    from chunklab_core.chunking import strategy_label
    from chunklab_core.reports.verdict_tables import paired_interval
    from chunklab_core.stats.claims import candidate_verdicts
    from chunklab_core.stats.clustered import clustered_bootstrap_ci

    folder, data, tables, config = built
    published = pd.read_csv(PROJ_ROOT / "data" / "02_budget.csv")
    corpus, tidy = tables["squad"]
    documents_of = {q.qid: q.doc_id for q in corpus.questions}
    page, errors = open_page(browser, (folder / lab.PAGE).as_uri())
    grid = data["budget"]["grid"]
    checked_post = 0
    for retriever, budget in [("bm25", 500), ("dense", 2000), ("hybrid", 4000), ("bm25", 256), ("hybrid", 8192)]:
        page.select_option("#b-retriever", retriever)
        slider = page.locator("#b-budget")
        slider.focus()
        page.keyboard.press("Home")
        for _ in range(grid.index(budget)):
            page.keyboard.press("ArrowRight")  # the budget slider by keyboard
        assert page.locator("#b-budget-value").text_content() == f"{budget:,} tokens"
        rows = {tr.get_attribute("data-strategy"): [td.text_content() for td in tr.locator("td").all()]
                for tr in page.locator("#b-table tbody tr").all()}
        group = tidy[(tidy["retriever"] == retriever) & (tidy["budget"] == budget)]
        wide = group.pivot(index="qid", columns="strategy", values="recall")
        docs = wide.index.map(documents_of).to_numpy()
        intervals = {s: clustered_bootstrap_ci(wide[s].to_numpy(), docs, config.resamples, config.seed)
                     for s in wide.columns}
        leader = max(intervals, key=lambda s: intervals[s].mean)
        against = {s: paired_interval(wide[leader].to_numpy(), wide[s].to_numpy(), config.resamples, config.seed,
                                      docs) for s in wide.columns if s != leader}
        words = candidate_verdicts(leader, {s: (i.low, i.high) for s, i in against.items()})
        assert set(rows) == set(wide.columns)
        for strategy, shown in rows.items():
            interval = intervals[strategy]
            assert shown[1] == as_shown(interval.mean)
            assert shown[2] == f"[{as_shown(interval.low)}, {as_shown(interval.high)}]"
            assert shown[4] == words[strategy]
            if strategy != leader:
                assert shown[3] == f"[{as_shown(against[strategy].low)}, {as_shown(against[strategy].high)}]"
            if budget in config.post_budgets:  # the post's own table
                row = published[(published["corpus"] == "squad") & (published["retriever"] == retriever)
                                & (published["strategy"] == strategy_label(strategy))
                                & (published["budget"] == budget)]
                assert len(row) == 1, (strategy, retriever, budget)
                stored = next(c for cell in data["budget"]["cells"] if cell["retriever"] == retriever
                              for r in cell["rows"] if r["budget"] == budget for c in r["candidates"]
                              if c["strategy"] == strategy)
                for column in ("recall", "low", "high"):
                    assert stored[column] == float(f"{row[column].iloc[0]:.5f}"), (strategy, retriever, budget, column)
                assert shown[1] == as_shown(row["recall"].iloc[0])
                checked_post += 1
        if budget in config.post_budgets:
            assert "post 02 reports this budget" in page.locator("#b-caption").text_content()
    assert checked_post >= 6
    assert not errors


@pytest.mark.slow
def test_footprint_panel_equals_the_estimate_and_says_overlap_must_stay_below_size(built, browser):
    folder, data, _, _ = built
    page, errors = open_page(browser, (folder / lab.PAGE).as_uri())
    preset = data["footprint"]["presets"][0]["tokens"]
    for tokens, size, overlap in [(preset, 500, 125), (preset, 256, 0), (123457, 1000, 200), (900, 512, 64)]:
        if tokens != preset:
            set_number(page, "#f-tokens", tokens)
        set_number(page, "#f-size", size)
        set_number(page, "#f-overlap", overlap)
        expected = lab.footprint_estimate(tokens, size, overlap)
        shown = {key: float(page.locator(f"#f-{key}").get_attribute("data-value"))
                 for key in ("stride", "chunks", "indexed", "duplication")}
        assert shown == pytest.approx({"stride": expected["stride"], "chunks": expected["chunks"],
                                       "indexed": expected["indexed_tokens"], "duplication": expected["duplication"]},
                                      abs=1e-12)
        assert page.locator("#f-error").text_content() == ""
    set_number(page, "#f-overlap", 512)
    assert "below the chunk size" in page.locator("#f-error").text_content()
    assert page.locator("#f-overlap").get_attribute("aria-invalid") == "true"
    assert page.locator("#f-chunks").text_content() == "—"
    assert "not a relevance gain" in page.locator("#footprint-panel").text_content()
    assert not errors


@pytest.mark.slow
def test_copied_link_restores_the_view_reset_and_export(built, browser, tmp_path):
    folder, data, _, _ = built
    page, errors = open_page(browser, (folder / lab.PAGE).as_uri())
    page.select_option("#r-strategy", "recursive_500")
    page.select_option("#r-question", "4")
    set_number(page, "#r-k", 7)
    page.select_option("#r-depth", "10")
    page.select_option("#b-retriever", "dense")
    page.focus("#b-budget")
    page.keyboard.press("Home")
    for _ in range(data["budget"]["grid"].index(1024)):
        page.keyboard.press("ArrowRight")
    set_number(page, "#f-size", 300)
    set_number(page, "#f-overlap", 30)
    page.click("#copy-link")
    link = page.locator("#link").input_value()
    assert "#" in link and link.startswith("file://")

    def view(p):
        return {"metrics": shown_metrics(p), "question": p.locator("#r-qtext").text_content(),
                "ranking": p.locator("#r-table tbody").text_content(), "budget": p.locator("#b-table").text_content(),
                "caption": p.locator("#b-caption").text_content(), "chunks": p.locator("#f-chunks").text_content(),
                "controls": [p.locator(s).input_value() for s in ("#r-strategy", "#r-question", "#r-k", "#r-depth",
                                                                   "#b-retriever", "#b-budget", "#f-size", "#f-overlap")]}

    before = view(page)
    second, more_errors = open_page(browser, link)
    assert view(second) == before
    assert before["controls"] == ["recursive_500", "4", "7", "10", "dense", str(data["budget"]["grid"].index(1024)),
                                  "300", "30"]

    with page.expect_download() as info:
        page.click("#b-export")
    rows = list(csv.reader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
    shown = [[td.text_content() for td in tr.locator("th, td").all()] for tr in page.locator("#b-table tr").all()]
    assert rows == shown and rows[0][0] == "strategy" and len(rows) == 1 + len(CONFIG["budget_strategies"])
    with page.expect_download() as info:
        page.click("#r-export")
    ranking_rows = list(csv.reader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
    assert ranking_rows[0][:3] == ["rank", "first-stage rank", "grade"] and len(ranking_rows) == 1 + lab.LabConfig().top

    page.click("#reset")
    assert page.locator("#r-k").input_value() == "5" and page.locator("#r-depth").input_value() == "0"
    assert page.locator("#f-size").input_value() == "500" and page.locator("#b-retriever").input_value() == "bm25"
    assert "k=5" in page.locator("#link").input_value()
    assert not errors and not more_errors

    shots = os.environ.get("LAB_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        for panel in ("ranking", "budget", "footprint"):
            second.locator(f"#{panel}-panel").screenshot(path=str(Path(shots) / f"lab_{panel}.png"))


@pytest.mark.slow
def test_hostile_text_shows_as_text(browser, tmp_path):
    lab.write_lab(tmp_path, small_data())
    page, errors = open_page(browser, (tmp_path / lab.PAGE).as_uri())
    assert page.locator("#r-qtext").text_content() == "<script>alert(1)</script>?"
    assert "<img src=x onerror=alert(2)>" in page.locator("#r-table").text_content()
    assert page.locator("#r-table img").count() == 0 and page.locator("#r-corpus b").count() == 0
    assert page.locator("#r-corpus option").first.text_content() == "S <b>1</b>"
    assert not errors
