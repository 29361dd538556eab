"""The shared atomic writer: the old file survives a failed write, no temporary file is left."""

from __future__ import annotations

import pytest

from chunklab_core.core.atomic_files import atomic_write, atomic_write_text


def test_replaces_the_file(tmp_path):
    target = tmp_path / "sub" / "f.txt"
    atomic_write_text(target, "one\r\ntwo")
    assert target.read_bytes() == b"one\r\ntwo"  # newlines written as given
    assert target.stat().st_mode & 0o777 == 0o644  # not mkstemp's private 0600
    atomic_write_text(target, "three")
    assert target.read_text() == "three" and [p.name for p in target.parent.iterdir()] == ["f.txt"]


def test_failed_write_keeps_the_old_file_and_removes_the_temporary(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old")

    def broken(tmp):
        tmp.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(target, broken)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_replace_folder_swaps_a_whole_folder_or_leaves_the_old_one(tmp_path):
    from chunklab_core.core.atomic_files import replace_folder

    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old")

    def fail(work):
        (work / "half.txt").write_text("half")
        raise RuntimeError("killed mid-run")

    with pytest.raises(RuntimeError):
        replace_folder(target, fail)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (target / "old.txt").read_text() == "old"

    def fill(work):
        (work / "new.txt").write_text("new")
        return 7

    assert replace_folder(target, fill) == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the old folder and the work folder gone
    assert [p.name for p in target.iterdir()] == ["new.txt"]
    assert replace_folder(tmp_path / "fresh" / "out", fill) == 7 and (tmp_path / "fresh" / "out" / "new.txt").exists()
