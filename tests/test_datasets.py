"""Data registry: verified fetch from a mirror, clear errors, nothing half-written."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from chunklab_core.data import registry as datasets


def _fake_entry(content: bytes, gzipped: bool = True) -> datasets.DataFile:
    return datasets.DataFile(
        key="fake", filename="fake.json.gz" if gzipped else "fake.txt", url="http://127.0.0.1:9/none",
        sha256=hashlib.sha256(content).hexdigest(), size=len(content), gzipped=gzipped,
        dataset="fake", license="none", citation="none",
    )


@pytest.fixture
def fake(monkeypatch):
    content = b'{"hello": "world"}'
    entry = _fake_entry(content)
    monkeypatch.setitem(datasets.REGISTRY, "fake", entry)
    return entry, content


def test_mirror_file_verified(tmp_path, fake):
    entry, content = fake
    with gzip.open(tmp_path / entry.filename, "wb") as handle:
        handle.write(content)
    assert datasets.fetch("fake", mirror=tmp_path) == tmp_path / entry.filename


def test_corrupt_mirror_file_names_file_and_checksum(tmp_path, fake):
    entry, _ = fake
    with gzip.open(tmp_path / entry.filename, "wb") as handle:
        handle.write(b"tampered")
    with pytest.raises(datasets.DataError) as err:
        datasets.fetch("fake", mirror=tmp_path)
    assert entry.filename in str(err.value) and entry.sha256 in str(err.value)


def test_unreadable_gzip_is_a_clear_error(tmp_path, fake):
    entry, _ = fake
    (tmp_path / entry.filename).write_bytes(b"not gzip at all")
    with pytest.raises(datasets.DataError, match="cannot be read"):
        datasets.fetch("fake", mirror=tmp_path)


def test_missing_mirror_file(tmp_path, fake):
    entry, _ = fake
    with pytest.raises(datasets.DataError, match="not found in the data mirror"):
        datasets.fetch("fake", mirror=tmp_path)


def test_failed_download_leaves_nothing_in_cache(tmp_path, fake, monkeypatch):
    entry, _ = fake
    monkeypatch.delenv(datasets.MIRROR_ENV, raising=False)

    def broken(entry, tmp: Path):  # writes half a file, then the connection drops
        tmp.write_bytes(b"half")
        raise OSError("connection reset")

    monkeypatch.setattr(datasets, "_download", broken)
    with pytest.raises(datasets.DataError, match="cannot download"):
        datasets.fetch("fake", mirror="", cache_dir=tmp_path)
    assert list(tmp_path.rglob("*")) == []


def test_corrupt_download_leaves_nothing_in_cache(tmp_path, fake, monkeypatch):
    entry, _ = fake
    monkeypatch.setattr(datasets, "_download", lambda e, tmp: tmp.write_bytes(gzip.compress(b"wrong")))
    with pytest.raises(datasets.DataError, match="checksum mismatch"):
        datasets.fetch("fake", mirror="", cache_dir=tmp_path)
    assert list(tmp_path.rglob("*")) == []


def test_download_then_cache_hit(tmp_path, fake, monkeypatch):
    entry, content = fake
    calls = []

    def good(e, tmp: Path):
        calls.append(1)
        with gzip.open(tmp, "wb") as handle:
            handle.write(content)

    monkeypatch.setattr(datasets, "_download", good)
    path = datasets.fetch("fake", mirror="", cache_dir=tmp_path)
    assert datasets.fetch("fake", mirror="", cache_dir=tmp_path) == path
    assert calls == [1]


def test_unknown_key():
    with pytest.raises(datasets.DataError, match="unknown data set"):
        datasets.fetch("no-such-data")


def test_every_registered_file_in_mirror_verifies(mirror):
    for key in datasets.REGISTRY:
        datasets.fetch(key, mirror=mirror)
