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


def shown_metrics(page, prefix: str = "m") -> dict:
    return {key: float(page.locator(f"#{prefix}-{key}").get_attribute("data-value"))
            for key in ("precision", "recall", "mrr", "ndcg", "inside")}


def python_metrics(data, state) -> dict:
    cell = next(c for c in data["ranking"]["cells"] if c["corpus"] == state["rc"] and c["strategy"] == state["rs"])
    ranks = cell["questions"][state["q"]]["ranks"]
    grades, scores = [r[1] for r in ranks], [r[2] for r in ranks]
    found = sum(g >= state["g"] for g in grades)
    return lab.reference_metrics(grades, scores, state["k"], state["g"], max(state.get("t", 0), found, 1), state["d"],
                                 state.get("gr", "threshold"))


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
        {"rc": "squad", "rs": "recursive_500", "q": 7, "k": 10, "g": 2, "d": 0, "gr": "trec"},
        {"rc": "squad", "rs": "recursive_500", "q": 11, "k": 1, "g": 1, "d": 5, "t": 6},
    ]
    for state in states:
        page.select_option("#r-strategy", state["rs"])
        page.select_option("#r-question", str(state["q"]))
        page.select_option("#r-grade", str(state["g"]))
        set_number(page, "#r-k", state["k"])
        page.select_option("#r-depth", str(state["d"]))
        page.select_option("#r-gain", state.get("gr", "threshold"))
        if "t" in state:
            set_number(page, "#r-total", state["t"])
        expected = python_metrics(data, state)
        got = shown_metrics(page)
        for key in got:
            assert got[key] == pytest.approx(expected[key], abs=1e-12), (state, key)
            assert page.locator(f"#m-{key}").text_content() == (f"{expected[key]:.3f}" if key != "inside"
                                                                 else str(expected[key]))
        cell = next(c for c in cells if c["strategy"] == state["rs"])
        ranks = cell["questions"][state["q"]]["ranks"]
        first_stage_ranks = [int(t) for t in page.locator("#r-table tbody td:nth-child(2)").all_text_contents()]
        assert [r - 1 for r in first_stage_ranks] == expected["order"]
        assert page.locator("#r-table tbody tr.row.inside").count() == min(state["k"], len(ranks))
        assert page.locator("#r-table tbody tr.ctx td.text").count() == len(ranks)  # each context under its row
        assert page.locator("#r-reading").text_content().strip()
    # the k and depth controls by keyboard: focus and arrow keys
    page.focus("#r-k")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Tab")
    assert shown_metrics(page) == pytest.approx(
        {k: v for k, v in python_metrics(data, {**states[-1], "k": 2}).items() if k != "order"})
    page.select_option("#r-gain", "threshold")
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
    rows = list(csv.reader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"), newline="")))
    settings = dict(r for r in rows[:rows.index([])] if len(r) == 2)
    assert settings["retriever"] == "dense" and settings["budget (tokens)"] == "1024" and settings["link"] == link
    table = rows[rows.index([]) + 1:]
    shown = [[td.text_content() for td in tr.locator("td").all()] for tr in page.locator("#b-table tbody tr").all()]
    assert table[0][0] == "strategy" and len(table) == 1 + len(CONFIG["budget_strategies"])
    for exported, row in zip(table[1:], shown):
        assert row[0].startswith(exported[0]) and as_shown(float(exported[1])) == row[1] and exported[6] == row[4]
    with page.expect_download() as info:
        page.click("#r-export")
    ranking_rows = list(csv.reader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"), newline="")))
    settings = dict(r for r in ranking_rows[:ranking_rows.index([])] if len(r) == 2)
    assert settings["question"] == page.locator("#r-qtext").text_content() and settings["k"] == "7"
    assert settings["reranking depth"] == "10" and settings["counted relevant (threshold)"].startswith("partial or full")
    for key, name in (("precision", "P@k"), ("recall", "recall@k"), ("mrr", "MRR@k"), ("ndcg", "nDCG@k"),
                      ("inside", "relevant inside k")):
        assert float(settings[name]) == pytest.approx(before["metrics"][key], abs=1e-12)
    table = ranking_rows[ranking_rows.index([]) + 1:]
    assert table[0][:3] == ["rank", "first-stage rank", "grade"] and len(table) == 1 + lab.LabConfig().top

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


# ------------------------------------------------------------------ issue 52: the ranking you build, the calculator,
# the exports, the phone, and (issue 49) links from outside


def synthetic_shown(page) -> list[int]:
    return [int(b.text_content().split(" ")[0]) for b in page.locator("#s-list button.grade").all()]


def ranx_metrics(grades, k, min_grade, total, gain):
    """The reference: ranx on the qrels the ranking stands for (test_lab.qrels_of), nDCG at relevance
    level 1 for all grades as gain and at the threshold for threshold only."""
    from ranx import Qrels, Run, evaluate

    from test_lab import qrels_of

    qrels = Qrels({"q": qrels_of(grades, min_grade, total, "trec")})
    run = Run({"q": {f"d{i}": float(len(grades) - i) for i in range(len(grades))}})
    level = 1 if gain == "trec" else min_grade
    names = [f"ndcg_burges@{k}-l{level}"] + [f"{m}@{k}-l{min_grade}" for m in ("precision", "recall", "mrr")]
    ref = evaluate(qrels, run, names)
    return {"ndcg": ref[names[0]], "precision": ref[names[1]], "recall": ref[names[2]], "mrr": ref[names[3]]}


@pytest.mark.slow
def test_synthetic_ranking_edited_by_click_and_key_equals_the_package_and_ranx(browser, tmp_path):
    lab.write_lab(tmp_path, small_data())
    page, errors = open_page(browser, (tmp_path / lab.PAGE).as_uri())
    model = {"grades": [2, 0, 1, 0, 0, 0, 0, 0, 0, 0], "k": 5, "g": 1, "t": 3, "gain": "threshold"}

    def check(what):
        assert synthetic_shown(page) == model["grades"], what
        grades = np.asarray(model["grades"])
        total = max(model["t"], int((grades >= model["g"]).sum()), 1)
        expected = lab.reference_metrics(grades, [0.0] * len(grades), model["k"], model["g"], total, 0, model["gain"])
        shown = shown_metrics(page, "s")
        for key in ("precision", "recall", "mrr", "ndcg", "inside"):
            assert shown[key] == pytest.approx(expected[key], abs=1e-12), (what, key)
        reference = ranx_metrics(grades, model["k"], model["g"], total, model["gain"])
        for key, value in reference.items():
            assert shown[key] == pytest.approx(value, abs=1e-9), (what, key, "ranx")
        assert page.locator("#s-list li.inside").count() == min(model["k"], len(grades))
        page.locator("#s-formulas summary").click() if not page.locator("#s-formulas").get_attribute("open") else None
        body = page.locator("#s-formula-body").text_content()
        assert f"nDCG@k = DCG@k / IDCG@k = " in body and body.endswith(f"= {expected['ndcg']:.3f}")
        assert f"P@k = relevant inside k / k = {expected['inside']} / {model['k']} = {expected['precision']:.3f}" in body
        return expected

    check("default")
    # the only relevant item moves from rank 1 to rank 4 (the question the lab should answer)
    page.locator("#s-list button.grade").nth(0).click()  # 2 -> 0
    page.locator("#s-list button.grade").nth(2).click()  # 1 -> 2
    page.locator("#s-list button.grade").nth(2).click()  # 2 -> 0
    model["grades"][0], model["grades"][2] = 0, 0
    page.locator("#s-list button.grade").nth(3).focus()
    page.keyboard.press("2")
    model["grades"][3] = 2
    check("by key")
    assert "The first relevant item is at rank 4" in page.locator("#s-reading").text_content()
    page.locator("#s-list button.grade").nth(5).focus()
    page.keyboard.press("1")
    model["grades"][5] = 1
    page.locator("#s-list button.grade").nth(7).focus()
    page.keyboard.press("Delete")
    del model["grades"][7]
    page.locator("#s-list button.remove").nth(0).click()
    del model["grades"][0]
    page.click("#s-add")
    page.click("#s-add")
    model["grades"] += [0, 0]
    page.locator("#s-list button.grade").last.click()
    model["grades"][-1] = 1
    check("edited")
    page.locator("#s-k").fill("7")  # typed, not left: k updates as typed
    model["k"] = 7
    check("k typed")
    page.locator("#s-total").fill("5")
    model["t"] = 5
    check("total")
    assert "recall is bounded by the qrels' total" in page.locator("#s-reading").text_content()
    page.select_option("#s-grade", "2")
    model["g"] = 2
    threshold = check("full only, threshold")
    assert "no gain under the threshold rule" in page.locator("#s-reading").text_content()
    assert "below the threshold earns no gain" in page.locator("#s-gain-note").text_content()
    page.select_option("#s-gain", "trec")
    model["gain"] = "trec"
    trec = check("full only, all grades as gain")
    assert trec["ndcg"] != pytest.approx(threshold["ndcg"])  # a partial inside k: the two rules differ here
    assert "every grade g > 0 earns" in page.locator("#s-gain-note").text_content()
    page.locator("#s-k").fill("0")  # out of range while typed: the range is said, no stale numbers are shown
    assert "from 1 to 50" in page.locator("#s-error").text_content()
    assert page.locator("#s-ndcg").text_content() == "—"
    page.locator("#s-k").press("Tab")
    model["k"] = 1
    check("k bounded on leaving the field")
    link = page.locator("#link").input_value()
    second, more = open_page(browser, link)
    assert synthetic_shown(second) == model["grades"] and shown_metrics(second, "s") == shown_metrics(page, "s")
    assert not errors and not more


@pytest.mark.slow
def test_budget_calculator_equals_the_package_and_links_the_recorded_recall(built, browser):
    folder, data, _, _ = built
    page, errors = open_page(browser, (folder / lab.PAGE).as_uri())
    grid = data["budget"]["grid"]
    for k, size, overlap, prompt, answer, window, price in [(5, 512, 64, 300, 200, 8192, 0.5),
                                                             (8, 256, 0, 1000, 500, 4096, 2.5),
                                                             (20, 1000, 200, 500, 500, 16000, 3.0),
                                                             (1, 200, 0, 0, 0, 1000, 0.0)]:
        for selector, value in (("#c-k", k), ("#c-size", size), ("#c-overlap", overlap), ("#c-prompt", prompt),
                                ("#c-answer", answer), ("#c-window", window), ("#c-price", price)):
            set_number(page, selector, value)
        expected = lab.context_budget(k, size, overlap, prompt, answer, window, price)
        shown = {key: float(page.locator(f"#c-{key}").get_attribute("data-value"))
                 for key in ("context", "total", "fits", "cost")}
        assert shown == pytest.approx({"context": expected["context_tokens"], "total": expected["tokens_per_question"],
                                       "fits": float(expected["fits"]), "cost": expected["cost_per_1000"]}, abs=1e-12)
        assert page.locator("#c-fits").text_content() == ("yes" if expected["fits"] else "no")
        measured = lab.measured_budget(grid, expected["context_tokens"])
        rows = {tr.get_attribute("data-strategy"): [td.text_content() for td in tr.locator("td").all()]
                for tr in page.locator("#c-table tbody tr").all()}
        if measured is None:
            assert not rows and "below them" in page.locator("#c-recall-caption").text_content()
            continue
        cell = next(c for c in data["budget"]["cells"] if c["retriever"] == page.locator("#b-retriever").input_value())
        recorded = next(r for r in cell["rows"] if r["budget"] == measured)
        assert f"within {measured:,} tokens" in page.locator("#c-recall-caption").text_content()
        assert set(rows) == {c["strategy"] for c in recorded["candidates"]}
        for candidate in recorded["candidates"]:
            assert rows[candidate["strategy"]][1] == f"{candidate['recall']:.3f}"
            assert rows[candidate["strategy"]][3] == candidate["verdict"]
        page.click("#c-show")  # the budget panel moves to that budget
        assert page.locator("#b-budget-value").text_content() == f"{measured:,} tokens"
    set_number(page, "#c-overlap", 200)
    assert "below the chunk size" in page.locator("#c-error").text_content()
    assert page.locator("#c-total").text_content() == "—"
    assert not errors


@pytest.mark.slow
def test_page_at_390_px_has_no_sideways_scroll_and_marks_the_gold(built, browser):
    folder, data, _, _ = built
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((folder / lab.PAGE).as_uri())
    page.wait_for_selector("body[data-ready='1']")
    cell = data["ranking"]["cells"][0]
    marked = 0
    for q in range(8):
        page.select_option("#r-question", str(q))
        width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert width[0] <= width[1] == 390, width
        wide = page.evaluate("[...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > 390.5)"
                             ".map(e => e.tagName + '#' + e.id + '.' + e.className).slice(0, 5)")
        assert not wide
        assert not tables_wider_than_the_column(page)
        alternatives = [a.lower() for a in cell["questions"][q]["gold_alternatives"]]
        for mark in page.locator("#r-table tr.ctx mark").all():
            assert mark.text_content().lower() in alternatives
            marked += 1
    assert marked >= 3
    steps = int(page.locator("#b-budget").get_attribute("max"))
    assert steps >= 3
    for step in range(steps + 1):  # every budget of the budget panel's table
        page.locator("#b-budget").fill(str(step))
        assert not tables_wider_than_the_column(page), step
    # the page is styled by the site's one style sheet, written beside it (no inline CSS)
    assert (folder / "site.css").is_file() and page.locator("style").count() == 0
    assert page.evaluate("getComputedStyle(document.querySelector('.toolbar')).display") == "flex"
    # the contexts sit under their rows, full width, not in a side column
    assert page.locator("#r-table tbody tr.ctx td").first.evaluate("td => td.colSpan") == 4
    assert not errors


def tables_wider_than_the_column(page) -> list:
    """Tables of the page wider than its text column and not in a scroll box (``.table-scroll``,
    the site's, itself no wider than the column, its key column kept in view): as
    ``scripts/check_site.py`` judges the site's pages."""
    return page.evaluate("""() => {
      const main = document.querySelector('main'), style = getComputedStyle(main);
      const column = main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return [...main.querySelectorAll('table')].filter(t => {
        const width = Math.max(t.scrollWidth, t.getBoundingClientRect().width);
        if (width <= column + 1) return false;
        const box = t.closest('.table-scroll'), key = t.querySelector('tbody tr td:first-child');
        return !box || box.getBoundingClientRect().width > column + 1 || getComputedStyle(box).overflowX !== 'auto'
               || !key || getComputedStyle(key).position !== 'sticky';
      }).map(t => [t.id, t.scrollWidth, column]);
    }""")


HOSTILE_LINK = ("#k=1000000000&d=7.5&q=1e308&rs=%3Cscript%3E&g=5&gr=linear&sg=2x9" + "1" * 80 + "&sk=-3&st=1e400"
                "&b=999999999&ft=-5&fs=abc&fo=1e9&ck=NaN&cs=1e30&cw=0&cm=-1")


@pytest.mark.slow
def test_an_absurd_link_is_bounded_and_the_metrics_are_the_controls(built, browser):
    folder, data, _, _ = built
    page, errors = open_page(browser, (folder / lab.PAGE).as_uri() + HOSTILE_LINK)
    note = page.locator("#url-note").text_content()
    assert "does not offer" in note and "outside 1–20: shown at 20" in note
    controls = {s: page.locator(s).input_value() for s in ("#r-k", "#r-depth", "#r-strategy", "#r-grade", "#r-gain",
                                                          "#r-question", "#s-k", "#b-budget", "#f-size", "#f-overlap")}
    assert all(v != "" for v in controls.values()), controls  # no blank select
    state = {"rc": "squad", "rs": controls["#r-strategy"], "q": int(controls["#r-question"]), "k": int(controls["#r-k"]),
             "g": int(controls["#r-grade"]), "d": int(controls["#r-depth"]), "gr": controls["#r-gain"]}
    assert state["k"] == 20 and state["rs"] in {c["strategy"] for c in data["ranking"]["cells"]}
    expected = python_metrics(data, state)
    assert shown_metrics(page) == pytest.approx({k: v for k, v in expected.items() if k != "order"}, abs=1e-12)
    assert len(synthetic_shown(page)) <= 50 and set(synthetic_shown(page)) <= {0, 1, 2}
    assert int(page.locator("#b-budget").input_value()) == len(data["budget"]["grid"]) - 1
    link = page.locator("#link").input_value()
    assert "k=20" in link and "1000000000" not in link and "script" not in link
    assert not errors


@pytest.mark.slow
def test_csv_helper_neutralises_the_python_sides_hostile_rows(browser, tmp_path):
    """static/csv_cells.js, as the lab inlines it, on the same hostile values as core.csv_cells' tests (test_faults_csv.VALUES), plus cells
    holding CR, LF, commas and quotes: read back by Python's csv module, each cell is exactly
    csv_cells.neutral_cell of the value (so restored_cell gives it back) and none starts a formula."""
    from chunklab_core.core.csv_cells import FORMULA_STARTS, neutral_cell, restored_cell
    from test_faults_csv import VALUES

    data = small_data()
    data["ranking"]["cells"][0]["texts"]["1"] = "-1+2 starts like a formula"  # 7 of 2,665 NQ contexts start with "-"
    lab.write_lab(tmp_path, data)
    page, errors = open_page(browser, (tmp_path / lab.PAGE).as_uri())
    values = VALUES + ["a\nb", "a\r\nb", "x,y", 'say "hi"', "=1\n+2", -0.5, 3]
    text = page.evaluate("values => chunklabCsv.csvText([values, values.slice().reverse()])", values)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == [str(neutral_cell(v)) for v in values] and rows[1] == rows[0][::-1]
    for value, written in zip(values, rows[0]):
        if isinstance(value, str):
            assert restored_cell(written) == value and written[:1] not in FORMULA_STARTS
    assert text.endswith("\n")
    with page.expect_download() as info:
        page.click("#r-export")
    cells = [c for r in csv.reader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"), newline="")) for c in r]
    assert "'-1+2 starts like a formula" in cells and not [c for c in cells if c[:1] in FORMULA_STARTS]
    assert not errors


@pytest.mark.slow
def test_posts_02_07_08_link_the_lab_at_a_state_that_opens_clean(built, browser):
    import json
    import re

    folder, data, _, _ = built
    for post in ("02_retrievers", "07_reranking", "08_library_splitters"):
        text = "".join("".join(c["source"]) for c in json.loads((PROJ_ROOT / "notebooks" / f"{post}.ipynb").read_text())["cells"]
                       if c["cell_type"] == "markdown")
        links = re.findall(r"\]\((lab\.html#[^)]+)\)", text)
        assert links, post
        page, errors = open_page(browser, folder.as_uri() + "/" + links[0])
        assert page.locator("#url-note").text_content() == "" and not errors, post
        if post == "02_retrievers":
            assert page.locator("#b-budget-value").text_content() == "1,000 tokens"
            assert page.locator("#c-context").get_attribute("data-value") == "1000"
        if post == "07_reranking":
            assert page.locator("#r-depth").input_value() == "10" and synthetic_shown(page).index(2) == 3
