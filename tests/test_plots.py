"""Figure saving: deterministic bytes, and showing a figure once in a notebook cell."""

from __future__ import annotations

import pytest
import matplotlib.pyplot as plt

from chunklab_core.reports import plots


def _figure():
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [1, 0])
    return fig


def test_save_figure_is_byte_identical_and_has_no_software_string(tmp_path):
    first = plots.save_figure(_figure(), "a", folder=tmp_path).read_bytes()
    second = plots.save_figure(_figure(), "b", folder=tmp_path).read_bytes()
    assert first == second
    assert b"Software" not in first and b"Matplotlib version" not in first


def test_show_figure_saves_only_when_asked_and_closes(tmp_path, capsys, monkeypatch):
    from chunklab_core.reports import figure_text

    monkeypatch.setitem(figure_text.FIGURES, "shown", figure_text.FigureText("a caption.", "An alt text."))
    fig = _figure()
    plots.show_figure(fig, "shown", write=False, folder=tmp_path)
    assert not (tmp_path / "shown.png").exists()
    assert not plt.fignum_exists(fig.number)  # closed: the inline backend will not show it again
    fig = _figure()
    plots.show_figure(fig, "shown", write=True, folder=tmp_path)
    assert (tmp_path / "shown.png").stat().st_size > 0
    assert not plt.fignum_exists(fig.number)


def test_every_figure_a_post_shows_has_a_caption_and_alt_text():
    """Each figure name a notebook source passes to show_figure has an entry in figure_text.FIGURES."""
    import re

    from chunklab_core.core.paths import PROJ_ROOT
    from chunklab_core.reports.figure_text import FIGURES, figure_text

    names = set()
    for path in (PROJ_ROOT / "notebooks" / "src").glob("*.ipynb"):
        names |= set(re.findall(r'show_figure\([^"]*?\\"(\w+)\\"', path.read_text(encoding="utf-8")))
    assert len(names) >= 20
    missing = names - set(FIGURES)
    assert not missing, f"figures without a caption and alt text: {sorted(missing)}"
    for name in names:
        text = figure_text(name)
        assert text.caption.endswith(".") and len(text.alt.split()) >= 10
    with pytest.raises(KeyError, match="figure_text.py"):
        figure_text("no_such_figure")


def test_png_records_the_smallest_text_in_pixels():
    import io

    from PIL import Image

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_title("big", fontsize=20)
    ax.text(0.5, 0.5, "tiny", fontsize=6)
    ax.tick_params(labelsize=12)
    expected = 6 * plt.rcParams["savefig.dpi"] / 72  # points x dpi / 72
    assert plots.smallest_text_px(fig) == pytest.approx(expected, abs=0.01)
    data = plots.png_bytes(fig)
    assert float(Image.open(io.BytesIO(data)).text[plots.MIN_TEXT_KEY]) == pytest.approx(expected, abs=0.01)
    assert plots.png_bytes(fig) == data  # deterministic
    plt.close(fig)
