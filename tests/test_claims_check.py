"""Numbers in prose come from code: no markdown cell of a notebook source states a measured number.

Every number in a markdown cell of ``notebooks/src/*.ipynb`` must be on the explicit list of
cited constants below (a design parameter, a formula's constant, a data set's published size,
a post or section number, a year); anything else is a measured number typed by hand and fails
the test, naming the notebook, the cell and the number. Measured numbers belong in code cells
(formatted from the tables they describe) or in generated tables.
"""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "notebooks" / "src").glob("*.ipynb"))
# Prose templates the report layer fills (chunklab_core.reports.templates): the same rule.
TEMPLATES = sorted((ROOT / "chunklab_core" / "reports").rglob("*.md"))
NUMBER = re.compile(r"(?<![\w.@])[-+−]?\d+(?:,\d{3})*(?:\.\d+)?%?")

# Cited constants allowed in every post: post numbers, section numbers, the confidence level.
EVERYWHERE = {
    **{f"{i:02d}": "post number" for i in range(0, 10)},
    **{str(i): "section number, k or a small count named in words" for i in range(0, 8)},
    "95%": "confidence level of every interval (a design constant)",
}
# Per post: each allowed number and why it is a constant, not a measurement.
CITED = {
    "00": {"10": "recall@10 / top 10 (k, a design parameter)", "1.5": "model size (1.5B)",
           "0.5": "model size (0.5B)"},
    "01": {"800": "N_QUESTIONS (a parameter)", "48": "SQuAD v1.1 dev: articles (published size)",
           "10,570": "SQuAD v1.1 dev: questions (published size)", "250": "child size (parameter)",
           "1,000": "parent size (parameter)", "80": "TF-IDF break percentile (parameter)",
           "500": "chunk size (parameter)", "1.2": "BM25 k1", "0.75": "BM25 b", "10": "k",
           "0.90": "recall threshold for context cost (parameter)"},
    "02": {"0.02": "DEFAULT_MARGIN, the declared smallest worthwhile difference (decision.margin)",
           "60": "RRF constant", "0.90": "fuzzy-match threshold (parameter)", "0.05": "λ (parameter)",
           "2008": "citation year (Cameron, Gelbach & Miller)", "100": "pct_tiny's largest value (a percentage)"},
    "03": {"10": "k", "800": "N_QUESTIONS (parameter)", "90%": "a \"90% sure\" pick (calibration band discussed)",
           "10,000": "RESAMPLES (parameter)", "100,000": "SELECTION_RESAMPLES (parameter)",
           "0.95": "confidence-set level (parameter)",
           "2.5%": "tail level (parameter)", "40": "N_ARTICLES (parameter)", "0.05": "λ (parameter)",
           "18": "simulated n (parameter)", "30": "simulated n (parameter)", "60": "simulated n (parameter)",
           "129": "simulated n (parameter)", "90": "a reported-probability band", "100%": "a band edge",
           "2,000": "resamples inside the simulation (parameter)", "20": "N_QUESTIONS / N_ARTICLES (parameters)",
           "80": "the sample size of the reference claim"},
    "04": {"10": "k", "1.5": "model size (1.5B)", "1.0": "a ratio's reference value"},
    "05": {"1.5": "model size (1.5B)", "0.5": "model size (0.5B)"},
    "06": {"2023": "citation year (Angelopoulos et al.)", "120": "minimum audit sample size (design)",
           "97.5%": "level of the one-sided exact bound when nothing is observed (a design constant)",
           "1.5": "model size (1.5B)", "0.5": "model size (0.5B)"},
    "07": {"50": "first-stage depth N (parameter)", "1.5": "model size (1.5B)", "768": "mpnet's dimensions (model fact)",
           "8": "bytes per posting (index-size formula)", "250": "child size (parameter)"},
    "08": {"2024": "citation year (Smith & Troynikov)", "50": "piece size in tokens (the report's method)",
           "256": "all-MiniLM-L6-v2's word-piece limit (model fact)", "1.5": "model size (Qwen2.5-Coder 1.5B)",
           "250": "a report row's chunk size in tokens (parameter)", "125": "a report row's overlap (parameter)",
           "200": "a report row's chunk size in tokens (parameter)",
           "300": "tokens per break of Chroma's modified Kamradt chunker (a constant of its code)",
           "0.05": "half the displayed precision of 0.1 points (a display constant)"},
    "ow": {"10": "k", "200": "fragment size in characters (setting)"},
}


def typed_numbers(text: str):
    """The numbers of a Markdown text, code spans, link targets and ``{placeholders}`` left out."""
    text = re.sub(r"`[^`]*`", "", text)  # code spans name parameters and functions
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    text = re.sub(r"\{[A-Za-z_]\w*\}", "", text)  # a template's placeholders (filled by code)
    text = re.sub(r"<!--[^>]*-->", "", text)  # a template's name
    return [number.lstrip("+-−") for number in NUMBER.findall(text)]


def markdown_numbers(path: Path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for number in typed_numbers("".join(cell["source"])):
            yield index, number


def test_the_check_catches_a_typed_number(tmp_path):
    fake = tmp_path / "09_fake.ipynb"
    fake.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": ["Recall is 0.934 here."]}]}))
    assert [n for _, n in markdown_numbers(fake)] == ["0.934"]


@pytest.mark.parametrize("path", SOURCES, ids=[p.name for p in SOURCES])
def test_no_measured_number_in_markdown(path):
    allowed = {**EVERYWHERE, **CITED.get(path.name[:2], {})}
    typed = [f"cell {i}: {n}" for i, n in markdown_numbers(path) if n not in allowed]
    assert not typed, (f"{path.relative_to(ROOT)} states numbers in markdown that are not cited constants "
                       f"(compute them in a code cell, or add a constant to CITED with its reason): {typed}")


def template_post(path: Path) -> str:
    """The post a template belongs to: ``reports/post06/reading.md`` -> ``06``."""
    match = re.search(r"post(\d\d)", str(path.relative_to(ROOT)))
    return match.group(1) if match else ""


def test_the_check_catches_a_typed_number_in_a_template():
    assert typed_numbers("<!-- a.b -->\nκ = {kappa} on {n} items, 0.41 at most.") == ["0.41"]


def test_templates_exist():
    assert TEMPLATES, "no prose template found under chunklab_core/reports"


@pytest.mark.parametrize("path", TEMPLATES, ids=[str(p.relative_to(ROOT / "chunklab_core" / "reports")) for p in TEMPLATES])
def test_no_measured_number_in_templates(path):
    allowed = {**EVERYWHERE, **CITED.get(template_post(path), {})}
    typed = [n for n in typed_numbers(path.read_text(encoding="utf-8")) if n not in allowed]
    assert not typed, (f"{path.relative_to(ROOT)} states numbers that are not cited constants (pass them "
                       f"as values from the report, or add a constant to CITED with its reason): {typed}")
