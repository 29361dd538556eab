"""The shared table writer of the posts (``reports.tables``): pandas' bytes (for tables without formula-leading text cells: those are in ``test_faults_round4_csv``), atomically, never among the inputs."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from chunklab_core.core import paths
from chunklab_core.reports.tables import save_compressed_table, save_table, save_tables, table_path


@pytest.fixture
def frame():
    return pd.DataFrame({"strategy": ["fixed_500", "recursive_500", "b,\"quoted\""],
                         "hit@5": [1 / 3, 2 / 3, np.nan], "n": [1, 2, 3]})


def test_writes_only_when_asked_and_returns_the_table(tmp_path, frame):
    assert save_table(frame, "01_x", False, folder=tmp_path) is frame
    assert save_compressed_table(frame, "01_x", False, folder=tmp_path) is frame
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("float_format, index", [(None, False), ("%.6f", False), ("%.3f", True)])
def test_a_table_is_the_bytes_pandas_writes(tmp_path, frame, float_format, index):
    save_table(frame, "01_x", True, float_format=float_format, index=index, folder=tmp_path / "new")
    frame.to_csv(tmp_path / "old.csv", index=index, float_format=float_format)
    assert (tmp_path / "new" / "01_x.csv").read_bytes() == (tmp_path / "old.csv").read_bytes()
    assert list(tmp_path.joinpath("new").iterdir()) == [tmp_path / "new" / "01_x.csv"]  # no temporary file left


def test_six_decimals_by_hand(tmp_path):
    save_table(pd.DataFrame({"a": [1 / 3]}), "06_x", True, float_format="%.6f", folder=tmp_path)
    assert (tmp_path / "06_x.csv").read_text() == "a\n0.333333\n"


def test_a_compressed_table_is_the_bytes_pandas_writes(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"qid": np.arange(20_000), "score": rng.random(20_000)})  # several write chunks
    save_compressed_table(frame, "02_x", True, float_format="%.5f", folder=tmp_path / "new")
    frame.to_csv(tmp_path / "02_x.csv.gz", index=False, float_format="%.5f",
                 compression={"method": "gzip", "mtime": 0})
    written = (tmp_path / "new" / "02_x.csv.gz").read_bytes()
    assert written == (tmp_path / "02_x.csv.gz").read_bytes()
    assert written[:4] == b"\x1f\x8b\x08\x08" and written[4:8] == b"\0\0\0\0"  # a file name, time stamp 0
    assert written[10:10 + len(b"02_x.csv\0")] == b"02_x.csv\0"  # the table's name, not the temporary file's
    assert gzip.decompress(written).decode() == frame.to_csv(index=False, float_format="%.5f")


def test_a_failed_write_keeps_the_previous_table(tmp_path, frame):
    save_table(frame, "01_x", True, folder=tmp_path)
    before = (tmp_path / "01_x.csv").read_bytes()
    with pytest.raises(Exception):
        save_table(frame, "01_x", True, float_format="%q", folder=tmp_path)  # not a format: to_csv raises
    assert (tmp_path / "01_x.csv").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["01_x.csv"]


def test_several_tables_are_each_written_as_save_table_writes_them(tmp_path, frame):
    second = frame.assign(n=[4, 5, 6])
    assert save_tables({"05_a": frame, "05_b": second}, True, float_format="%.4f", folder=tmp_path / "many") is None
    save_table(frame, "05_a", True, float_format="%.4f", folder=tmp_path / "one")
    save_table(second, "05_b", True, float_format="%.4f", folder=tmp_path / "one")
    for name in ("05_a.csv", "05_b.csv"):
        assert (tmp_path / "many" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()


def test_several_tables_check_every_name_before_writing(tmp_path, frame):
    with pytest.raises(ValueError, match="file name"):
        save_tables({"05_a": frame, "../05_b": frame}, True, folder=tmp_path)
    assert not tmp_path.joinpath("05_a.csv").exists()


def test_tables_go_to_the_tables_folder_by_default():
    assert table_path("01_results", ".csv") == paths.TABLES_DIR / "01_results.csv"


@pytest.mark.parametrize("folder", [paths.RECORDS_DIR, paths.AUDIT_DIR, paths.AUDIT_DIR / "sub"])
def test_the_irreplaceable_folders_are_refused_even_without_writing(folder, frame):
    for save in (save_table, save_compressed_table):
        with pytest.raises(ValueError, match="irreplaceable"):
            save(frame, "06_x", False, folder=folder)


@pytest.mark.parametrize("name", ["", "records/06_x", "../06_x", ".."])
def test_a_name_is_a_file_name(name, frame, tmp_path):
    with pytest.raises(ValueError, match="file name"):
        save_table(frame, name, True, folder=tmp_path)
