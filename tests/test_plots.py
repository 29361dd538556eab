"""Figure saving: deterministic bytes, and showing a figure once in a notebook cell."""

from __future__ import annotations

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


def test_show_figure_saves_only_when_asked_and_closes(tmp_path, capsys):
    fig = _figure()
    plots.show_figure(fig, "shown", write=False, folder=tmp_path)
    assert not (tmp_path / "shown.png").exists()
    assert not plt.fignum_exists(fig.number)  # closed: the inline backend will not show it again
    fig = _figure()
    plots.show_figure(fig, "shown", write=True, folder=tmp_path)
    assert (tmp_path / "shown.png").stat().st_size > 0
    assert not plt.fignum_exists(fig.number)
