"""The lab page's formulas, data file and page (issue 39), fast tier.

Formulas pinned on hand-computed fixtures and cross-checked: the ranking panel's metrics against
pytrec_eval (the established reference the series uses), the footprint estimate against post
07's own functions (``retrieval.footprint``) on chunks cut by ``chunking.token_windows``. The
data file cannot close a tag; the page labels every control and writes what it shows as text.
The browser half (the page's script against these functions) is ``test_lab_browser.py``.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from chunklab_core.reports import lab


def test_footprint_estimate_hand_computed():
    # T = 1,000, S = 500, O = 125: stride 375, windows at 0, 375, 750 -> 3 chunks, 1,000 + 2 * 125 indexed
    assert lab.footprint_estimate(1000, 500, 125) == {"stride": 375, "chunks": 3, "indexed_tokens": 1250,
                                                      "duplication": 1.25}
    assert lab.footprint_estimate(400, 500, 0) == {"stride": 500, "chunks": 1, "indexed_tokens": 400,
                                                   "duplication": 1.0}
    assert lab.footprint_estimate(1001, 500, 0)["chunks"] == 3
    for bad in ((1000, 500, 500), (1000, 500, 600), (1000, 500, -1), (0, 500, 0), (1000, 0, 0), (1000, 500, 1.5)):
        with pytest.raises(ValueError):
            lab.footprint_estimate(*bad)


@pytest.mark.parametrize("tokens, size, overlap", [(1000, 500, 125), (2048, 256, 32), (300, 500, 100),
                                                   (1750, 512, 64), (999, 100, 99)])
def test_footprint_estimate_equals_post07_functions_on_token_windows(tokens, size, overlap):
    """One text of ``tokens`` tokens of 4 characters each (" the"), cut by fixed_tokens: chunk count,
    indexed tokens (count_tokens_many), duplication (footprint.duplication_factor, on characters)
    and stride (footprint.mean_stride, characters / 4) are the estimate's."""
    from chunklab_core.core.corpus import Chunk
    from chunklab_core.core.tokens import count_tokens, count_tokens_many
    from chunklab_core.chunking.token_windows import fixed_tokens
    from chunklab_core.retrieval import footprint

    text = " the" * tokens
    assert count_tokens(text) == tokens
    spans = fixed_tokens(text, size, overlap)
    chunks = [Chunk(i, "d", s, e, cs, ce) for i, (s, e, cs, ce) in enumerate(spans)]
    estimate = lab.footprint_estimate(tokens, size, overlap)
    assert len(chunks) == estimate["chunks"]
    assert int(count_tokens_many([text[c.start:c.end] for c in chunks]).sum()) == estimate["indexed_tokens"]
    assert footprint.duplication_factor(chunks) == pytest.approx(estimate["duplication"], abs=1e-12)
    if len(chunks) > 1:
        assert footprint.mean_stride(chunks) / 4 == estimate["stride"]


def test_reference_metrics_hand_computed():
    # grades by rank 0, 2, 1, 0; k = 3, partial counts, 2 relevant known
    m = lab.reference_metrics([0, 2, 1, 0], [0.1, 0.2, 0.3, 0.4], k=3, min_grade=1, total_relevant=2, depth=0)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(1.0)
    assert m["mrr"] == pytest.approx(0.5)
    dcg = 3 / math.log2(3) + 1 / math.log2(4)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)
    assert m["ndcg"] == pytest.approx(dcg / idcg)
    # full only: the partial context no longer counts, neither in the ranking nor in the ideal
    m = lab.reference_metrics([0, 2, 1, 0], [0.1, 0.2, 0.3, 0.4], k=3, min_grade=2, total_relevant=1, depth=0)
    assert (m["precision"], m["recall"], m["mrr"]) == pytest.approx((1 / 3, 1.0, 0.5))
    assert m["ndcg"] == pytest.approx((3 / math.log2(3)) / 3)
    # reranking the top 3 by score: order 2, 1, 0, then 3 unchanged
    m = lab.reference_metrics([0, 2, 1, 0], [0.1, 0.2, 0.3, 0.4], k=1, min_grade=1, total_relevant=4, depth=3)
    assert m["order"] == [2, 1, 0, 3]
    assert (m["precision"], m["recall"], m["mrr"]) == pytest.approx((1.0, 0.25, 1.0))
    # ideal padded with two unseen relevant contexts at the minimum grade: 3, 1, 1, 1 -> top 1 is 3
    assert m["ndcg"] == pytest.approx(1 / 3)


def test_reference_metrics_agree_with_pytrec_eval():
    """P@k, recall@k (relevant known = every judged relevant), RR and nDCG with gains 2^g - 1 on random
    graded rankings, against pytrec_eval with those gains as its (linear) relevance levels."""
    import pytrec_eval

    rng = np.random.default_rng(7)
    for trial in range(40):
        grades = rng.choice([0, 0, 0, 1, 2], size=20)
        if not (grades > 0).any():
            grades[rng.integers(20)] = 2
        scores = rng.normal(size=20)
        k, depth = int(rng.choice([1, 3, 5, 10])), int(rng.choice([0, 5, 10, 20]))
        ours = lab.reference_metrics(grades, scores, k, 1, int((grades > 0).sum()), depth)
        order = ours["order"]
        qrel = {"q": {f"d{i}": int(2 ** g - 1) for i, g in enumerate(grades)}}
        run = {"q": {f"d{i}": float(20 - position) for position, i in enumerate(order)}}
        cut = {1: "1", 3: "3", 5: "5", 10: "10"}[k]
        cuts = "1,3,5,10"
        ref = pytrec_eval.RelevanceEvaluator(qrel, {f"P.{cuts}", f"recall.{cuts}", f"ndcg_cut.{cuts}",
                                                    "recip_rank"}).evaluate(run)["q"]
        assert ours["precision"] == pytest.approx(ref[f"P_{cut}"])
        assert ours["recall"] == pytest.approx(ref[f"recall_{cut}"])
        assert ours["ndcg"] == pytest.approx(ref[f"ndcg_cut_{cut}"])
        first = next(p for p, i in enumerate(order) if grades[i] > 0)
        assert ours["mrr"] == pytest.approx(ref["recip_rank"] if first < k else 0.0)


def test_budget_grid_spans_256_to_8192_with_the_posts_budgets():
    grid = lab.budget_grid((500, 1000, 2000, 4000))
    assert grid[0] == 256 and grid[-1] == 8192
    assert {500, 1000, 2000, 4000} <= set(grid) and grid == sorted(set(grid))


def test_data_script_cannot_close_a_tag():
    data = {"text": "</script><img src=x onerror=alert(1)> & “quotes”"}
    script = lab.data_script(data)
    assert "<" not in script and script.startswith("window.LAB_DATA = ")
    assert json.loads(script[len("window.LAB_DATA = "):-2]) == data


def test_page_labels_every_control_and_writes_text_only():
    page = lab.TEMPLATE.read_text(encoding="utf-8")
    controls = re.findall(r'<(?:select|input)[^>]*\bid="([^"]+)"', page)
    assert len(controls) >= 14
    for control in controls:
        assert f'for="{control}"' in page or f'aria-label=' in re.search(rf'<[^>]*id="{control}"[^>]*>', page).group(0), control
    script = page[page.index("<script>"):]
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script and "document.write" not in script
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page)  # offline: nothing from another host


def small_data():
    """A lab data set by hand (two questions, one budget cell, one preset), with hostile text."""
    ranks = [[0, 2, 0.5], [1, 0, 0.9], [2, 1, 0.1]]
    ranking = {"top": 3, "grades": lab.GRADE_WORDS, "subset": 2, "rescore_depth": 3,
               "cells": [{"corpus": "squad", "sample": "S <b>1</b>", "strategy": "fixed_500",
                          "strategy_label": "Fixed 500", "retriever": "bm25", "scorer": "m",
                          "questions": [{"qid": "a", "text": "<script>alert(1)</script>?", "gold": "g", "ranks": ranks},
                                        {"qid": "b", "text": "second", "gold": "h", "ranks": ranks[::-1]}],
                          "texts": {"0": "<img src=x onerror=alert(2)>", "1": "b", "2": "c"}}]}
    candidate = {"strategy": "fixed_500", "label": "Fixed 500", "recall": 0.5, "low": 0.4, "high": 0.6,
                 "diff_low": None, "diff_high": None, "verdict": "winner", "tokens": 400.0, "binds": 0.0}
    budget = {"grid": [256, 500], "post_budgets": [500], "model": "m", "resamples": 10,
              "cells": [{"corpus": "squad", "sample": "S", "retriever": "bm25", "model": "—", "questions": 2,
                         "design": "questions", "rows": [{"budget": b, "leader": "fixed_500", "candidates": [candidate]}
                                                         for b in (256, 500)]}]}
    footprint = {"presets": [{"corpus": "squad", "sample": "S", "documents": 1, "tokens": 1000}], "size": 500,
                 "overlap": 125}
    return {"ranking": ranking, "budget": budget, "footprint": footprint}


def test_build_site_writes_the_lab_and_links_it(tmp_path):
    from test_website import _post

    from chunklab_core.reports.website import build_site

    folder = tmp_path / "posts"
    folder.mkdir()
    _post(folder / "01_first.ipynb", "01 · First post", "*Does it work?*")
    pages = build_site(tmp_path / "site", sorted(folder.glob("*.ipynb")), small_data())
    assert tmp_path / "site" / "lab.html" in pages
    assert (tmp_path / "site" / "lab-data.js").is_file()
    assert 'href="lab.html"' in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="index.html"' in (tmp_path / "site" / "lab.html").read_text(encoding="utf-8")
    without = build_site(tmp_path / "plain", sorted(folder.glob("*.ipynb")))
    assert not (tmp_path / "plain" / "lab.html").exists() and len(without) == len(pages) - 1


def test_the_lab_is_styled_by_the_sites_one_style_sheet(tmp_path):
    """The page carries no CSS of its own: it links ``site.css``, which ``write_lab`` alone writes
    beside it (the same file the site writes), and the sheet's lab rules touch only the lab."""
    from chunklab_core.reports.site_style import STYLE_FILE, STYLE_SOURCE

    written = lab.write_lab(tmp_path, small_data())
    page = (tmp_path / lab.PAGE).read_text(encoding="utf-8")
    assert tmp_path / STYLE_FILE in written
    assert (tmp_path / STYLE_FILE).read_bytes() == STYLE_SOURCE.read_bytes()
    assert f'<link rel="stylesheet" href="{STYLE_FILE}">' in page and '<body class="lab">' in page
    assert "<style" not in page and not re.search(r"\sstyle=", page)
    sheet = STYLE_SOURCE.read_text(encoding="utf-8")
    start = sheet.index("the lab (lab.html only)")
    rules = re.sub(r"/\*.*?\*/", "", sheet[sheet.index("*/", start) + 2:], flags=re.S)
    selectors = [s.strip() for block in re.findall(r"([^{}]+)\{[^{}]*\}", re.sub(r"@media[^{]*\{", "", rules))
                 for s in block.split(",")]
    assert len(selectors) >= 40
    assert all(s.startswith(".lab ") for s in selectors), [s for s in selectors if not s.startswith(".lab ")]
    # the site's scroll box holds the two tables that can outgrow a phone's column
    for table in ("r-table", "b-table"):
        assert re.search(rf'<div class="table-scroll"><table id="{table}"', page), table


def test_gain_rules_hand_computed():
    """Grades by rank 2, 1, 0, 2 with full only counted relevant (threshold 2), 3 relevant in the qrels.
    Threshold only: gains 3, 0, 0, 3; ideal 3, 3, 3. All grades as gain: gains 3, 1, 0, 3; ideal
    from every grade > 0 found plus the unranked relevant one at grade 2: 3, 3, 3, 1."""
    grades, none = [2, 1, 0, 2], [0.0] * 4
    m = lab.reference_metrics(grades, none, k=4, min_grade=2, total_relevant=3, depth=0, gain="threshold")
    d = math.log2
    assert m["ndcg"] == pytest.approx((3 + 3 / d(5)) / (3 + 3 / d(3) + 3 / d(4)))
    assert (m["precision"], m["recall"], m["mrr"], m["inside"]) == pytest.approx((0.5, 2 / 3, 1.0, 2))
    t = lab.reference_metrics(grades, none, k=4, min_grade=2, total_relevant=3, depth=0, gain="trec")
    assert t["ndcg"] == pytest.approx((3 + 1 / d(3) + 3 / d(5)) / (3 + 3 / d(3) + 3 / d(4) + 1 / d(5)))
    assert (t["precision"], t["recall"], t["mrr"], t["inside"]) == (m["precision"], m["recall"], m["mrr"], m["inside"])
    # with partial counted relevant, the two rules are one
    for gain in lab.GAIN_RULES:
        assert lab.reference_metrics(grades, none, 3, 1, 3, 0, gain)["ndcg"] == pytest.approx(
            lab.reference_metrics(grades, none, 3, 1, 3, 0, "threshold")["ndcg"])
    with pytest.raises(ValueError, match="gain must be one of"):
        lab.reference_metrics(grades, none, 3, 1, 3, 0, "linear")


def random_rankings(trials: int, seed: int = 11):
    """Graded rankings of 1 to 12 items, a threshold, k, extra unranked relevant items and a gain rule."""
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        grades = rng.choice([0, 0, 1, 2], size=int(rng.integers(1, 13)))
        min_grade = int(rng.choice([1, 2]))
        if not (grades >= min_grade).any():
            grades[rng.integers(len(grades))] = 2
        found = int((grades >= min_grade).sum())
        yield (grades, int(rng.choice([1, 2, 3, 5, 10, 15])), min_grade, found + int(rng.integers(0, 3)),
               str(rng.choice(list(lab.GAIN_RULES))))


def qrels_of(grades, min_grade, total, gain):
    """The qrels the page's ranking stands for: every ranked item at its grade (below the threshold
    dropped under threshold-only), plus the unranked relevant ones at the threshold grade."""
    qrels = {f"d{i}": int(g) for i, g in enumerate(grades) if g > 0 and (gain == "trec" or g >= min_grade)}
    extra = total - int((np.asarray(grades) >= min_grade).sum())
    qrels.update({f"x{j}": min_grade for j in range(extra)})
    return qrels


def test_both_gain_rules_agree_with_pytrec_eval():
    """pytrec_eval (trec_eval's code) on the qrels each rule stands for, gains 2^g − 1 as its linear
    levels and the threshold as its relevance level (P@k and recall@k)."""
    import pytrec_eval

    for grades, k, min_grade, total, gain in random_rankings(60):
        ours = lab.reference_metrics(grades, [0.0] * len(grades), k, min_grade, total, 0, gain)
        qrel = {"q": {d: 2 ** g - 1 for d, g in qrels_of(grades, min_grade, total, gain).items()}}
        run = {"q": {f"d{i}": float(len(grades) - i) for i in range(len(grades))}}
        ref = pytrec_eval.RelevanceEvaluator(qrel, {f"ndcg_cut.{k}", f"P.{k}", f"recall.{k}"},
                                             relevance_level=2 ** min_grade - 1).evaluate(run)["q"]
        assert ours["ndcg"] == pytest.approx(ref[f"ndcg_cut_{k}"]), (grades.tolist(), k, min_grade, total, gain)
        assert ours["precision"] == pytest.approx(ref[f"P_{k}"])
        assert ours["recall"] == pytest.approx(ref[f"recall_{k}"])


@pytest.mark.heavy
def test_both_gain_rules_agree_with_ranx():
    """ranx: ndcg_burges (gain 2^g − 1) at relevance level 1 (``-l1``) is the all-grades rule; at
    relevance level = the threshold (ranx drops qrels below it) it is threshold only; P@k, recall@k and
    MRR@k at the threshold. Heavy tier: ranx compiles with numba on first use (the project's rule)."""
    from ranx import Qrels, Run, evaluate

    for grades, k, min_grade, total, gain in random_rankings(40, seed=5):
        ours = lab.reference_metrics(grades, [0.0] * len(grades), k, min_grade, total, 0, gain)
        qrels = Qrels({"q": qrels_of(grades, min_grade, total, "trec")})
        run = Run({"q": {f"d{i}": float(len(grades) - i) for i in range(len(grades))}})
        level = 1 if gain == "trec" else min_grade
        names = [f"ndcg_burges@{k}-l{level}"] + [f"{m}@{k}-l{min_grade}" for m in ("precision", "recall", "mrr")]
        ref = evaluate(qrels, run, names)
        assert ours["ndcg"] == pytest.approx(ref[names[0]]), (grades.tolist(), k, min_grade, total, gain)
        assert (ours["precision"], ours["recall"], ours["mrr"]) == pytest.approx(tuple(ref[n] for n in names[1:]))


def test_context_budget_hand_computed():
    r = lab.context_budget(5, 512, 64, 300, 200, 8192, 0.5)
    assert r == {"context_tokens": 2560, "repeated_at_most": 256, "tokens_per_question": 3060, "fits": True,
                 "headroom": 5132, "cost_per_1000": pytest.approx(1.53)}
    r = lab.context_budget(20, 1000, 0, 500, 500, 16000, 3.0)
    assert (r["tokens_per_question"], r["fits"], r["headroom"]) == (21000, False, -5000)
    assert r["cost_per_1000"] == pytest.approx(63.0)
    assert lab.context_budget(1, 100, 99, 0, 0, 100, 0)["fits"]  # exactly the window fits
    for bad in [(0, 512, 0, 0, 0, 8192, 1), (5, 512, 512, 0, 0, 8192, 1), (5, 512, 0, -1, 0, 8192, 1),
                (5, 512, 0, 0, 0, 0, 1), (5, 512, 0, 0, 0, 8192, -0.1)]:
        with pytest.raises(ValueError):
            lab.context_budget(*bad)


def test_measured_budget_is_the_largest_measured_within_the_context():
    grid = lab.budget_grid()
    assert lab.measured_budget(grid, 2560) == 2048 and lab.measured_budget(grid, 2000) == 2000
    assert lab.measured_budget(grid, 255) is None and lab.measured_budget(grid, 10 ** 6) == 8192


def test_excerpt_shows_the_gold_past_the_head():
    text = "a" * 300 + " Thirty Days " + "b" * 300
    start, shown = lab.excerpt(text, ["thirty days"], 200)
    assert 0 < start <= 300 and "Thirty Days" in shown and shown.startswith("…") and shown.endswith("…")
    assert lab.excerpt(text, [], 200) == (0, "a" * 200 + "…")
    assert lab.excerpt("the gold is here", ["gold"], 200) == (0, "the gold is here")
