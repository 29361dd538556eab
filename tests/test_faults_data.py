"""Fault injection, data files (issue 30): one changed byte inside a mirrored gzip stream is a
checksum problem naming that file, and every other file is still checked."""

from __future__ import annotations

import gzip
import hashlib

import pytest

from chunklab_core.data import registry as datasets


@pytest.fixture
def three_files(tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.MIRROR_ENV, str(tmp_path))
    for key in ("fake-a", "fake-b", "fake-c"):
        content = b"".join(b"line %d of %s\n" % (i, key.encode()) for i in range(5000))
        monkeypatch.setitem(datasets.REGISTRY, key, datasets.DataFile(
            key, f"{key}.json.gz", "http://127.0.0.1:9/none", hashlib.sha256(content).hexdigest(), len(content),
            True, key, "none", "none"))
        (tmp_path / f"{key}.json.gz").write_bytes(gzip.compress(content, mtime=0))
    return tmp_path


def flip(path, position):
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))


def test_one_changed_byte_in_a_gzip_stream_names_the_file_and_every_file_is_checked(three_files):
    flip(three_files / "fake-a.json.gz", 20)  # inside the deflate stream: zlib.error before any checksum
    flip(three_files / "fake-c.json.gz", 20)
    with pytest.raises(datasets.DataError) as err:
        datasets.fetch_all(["fake-a", "fake-b", "fake-c"])
    message = str(err.value)
    assert message.startswith("2 of 3 data file(s) failed")
    assert "fake-a.json.gz: cannot be read (error:" in message and "fake-c.json.gz: cannot be read" in message
    assert "fake-b" not in message and message.count("replace fake-") == 2
