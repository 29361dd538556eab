"""On-disk cache of text embeddings: each distinct (model, text, prefix) is encoded once, ever.

Handles: the key (model identity, sha256 of the text, prefix), deduplication of the texts of a
call before encoding, an append-only store that survives a killed run, and counters that show
how much was encoded versus served from the cache.

Layout, one folder per model identity under ``paths.CACHE_DIR / "embeddings"``::

    <identity>/index.sqlite3        table emb(text_sha, prefix) -> (shard, row); meta(dim)
    <identity>/shard-00000001.npy   float32 (rows, dim), written once, never modified

Crash safety: a block of newly encoded rows is written to a temporary file and renamed into
place (``os.replace``) *before* its index rows are committed in one sqlite transaction. A run
killed at any point therefore leaves at worst an orphan shard file that no index row points
to, never an index row pointing at missing or partial data. Shard numbers are reserved through
sqlite (AUTOINCREMENT), so two processes filling the same cache never write the same file.
A run loses at most the block being encoded (``flush_rows`` texts).

Shard checks: each shard's byte length and sha256 are stored beside it (table ``shards``,
committed with its index rows) and checked before the shard is first used in a process. A
shard that is missing, truncated or altered (one flipped byte is enough) is named in a
warning, set aside (renamed ``shard-*.npy.bad-<time>``, never deleted, so it can be
inspected), its index rows are dropped, and its texts are encoded again in the same call.

Cache key (:func:`cache_key`, the one place it is built; ``model_identity`` is its default
use): the model's label plus 16 hex of a sha256 over the sha256 of every file of the model
folder (configs, tokenizer, weights; README and hidden files excluded) and the versions of
the libraries that compute the vectors (torch, sentence-transformers, transformers), and a window variant's shorter
window (``model_windows.window_extra``). A new library version, a changed tokenizer or weight file is therefore a new cache folder. Whole
files are hashed once per file version: the digests are remembered in
``<cache root>/file-sha256.json`` by path, size and modification time, so later loads cost
a stat per file. Another backend (e.g. ONNX) passes its own ``libraries`` and ``extra``.

A cache that cannot be used -- a read-only folder, an ``index.sqlite3`` that is not a database
(garbage, a truncated copy), a full disk -- is :class:`CacheUnusable`, naming the folder and the
fix (delete the folder: only cached vectors are lost, they are encoded again; or point
``CHUNKLAB_CACHE`` at a writable folder), never a bare ``sqlite3`` error without a path.

Not handled: eviction (delete a model's folder to drop it), sharing between machines, vectors
that are not float32.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import sqlite3
import warnings
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from chunklab_core.core.atomic_files import atomic_write
from chunklab_core.core.hashing import file_sha256 as raw_file_sha256

_IGNORED_FILES = {"README.md", ".gitattributes", "desktop.ini"}
_SQL_CHUNK = 500  # keys per "IN (...)" query, well under sqlite's variable limit


def text_sha256(text: str) -> str:
    """sha256 hex digest of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


DEFAULT_LIBRARIES = ("torch", "sentence-transformers", "transformers")


def library_versions(names: Iterable[str]) -> dict[str, str]:
    """Installed version of each distribution (``"absent"`` when not installed); no import."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def _model_files(folder: Path) -> list[Path]:
    return sorted(p for p in Path(folder).rglob("*") if p.is_file() and p.name not in _IGNORED_FILES
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def file_sha256(path: Path, memo: Path | None = None) -> str:
    """sha256 of a whole file, remembered in the JSON file ``memo`` by (path, size, mtime)."""
    path = Path(path).resolve()
    stat = path.stat()
    stamp = f"{stat.st_size}:{stat.st_mtime_ns}"
    known: dict = {}
    if memo is not None and memo.is_file():
        try:
            known = json.loads(memo.read_text(encoding="utf-8"))
        except ValueError:
            known = {}
    entry = known.get(str(path))
    if isinstance(entry, dict) and entry.get("stamp") == stamp:
        return entry["sha256"]
    sha = raw_file_sha256(path)
    if memo is not None:
        known[str(path)] = {"stamp": stamp, "sha256": sha}
        text = json.dumps(known, indent=0, sort_keys=True)
        atomic_write(memo, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return sha


def cache_key(label: str, folder: Path, *, libraries: Iterable[str] = DEFAULT_LIBRARIES,
              extra: dict | None = None, memo: Path | None = None) -> str:
    """``<label>__<16 hex>`` over the model's file hashes, ``libraries``' versions and ``extra``.

    The single place a cache key is made: a backend with other libraries (ONNX runtime...)
    passes its own ``libraries``, and anything else that changes the vectors in ``extra``.
    """
    folder = Path(folder)
    payload = {
        "files": {p.relative_to(folder).as_posix(): file_sha256(p, memo) for p in _model_files(folder)},
        "libraries": library_versions(libraries),
        "extra": extra or {},
    }
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._") or "model"
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()
    return f"{safe}__{digest[:16]}"


def model_identity(label: str, folder: Path, root: Path | None = None, window: int | None = None) -> str:
    """The sentence-transformers cache key of a model (:func:`cache_key` with the defaults);
    ``root`` (the cache root) holds the remembered file digests. ``window``: a window variant's
    shorter window (``model_windows``), a field of the key; ``None`` leaves the key as it was."""
    from chunklab_core.retrieval.model_windows import window_extra

    memo = Path(root) / "file-sha256.json" if root is not None else None
    return cache_key(label, folder, memo=memo, extra=window_extra(window) or None)


def distinct_in_order(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Distinct texts in first-seen order, and for each input the position of its text there."""
    first: dict[str, int] = {}
    inverse = np.fromiter((first.setdefault(t, len(first)) for t in texts), dtype=np.int64, count=len(texts))
    return list(first), inverse


class CacheUnusable(RuntimeError):
    """The embedding cache's folder or index cannot be used; the message names both and the fix."""


def _unusable(folder: Path, exc: BaseException) -> CacheUnusable:
    reason = getattr(exc, "strerror", None) or str(exc)
    return CacheUnusable(
        f"the embedding cache {folder} cannot be used ({type(exc).__name__}: {reason}; index "
        f"{folder / 'index.sqlite3'}). Delete that folder (only cached vectors are lost; they are encoded "
        "again), or make it writable, or set CHUNKLAB_CACHE to a writable folder")


class EmbeddingCache:
    """Embeddings of one model, cached on disk (``root`` given) or in memory (``root=None``).

    Counters (cumulative over the object's life, all counting *distinct* texts per call except
    ``requested_count``): ``requested_count`` rows asked for, ``distinct_count`` distinct
    (text, prefix) pairs among them, ``cache_hits`` found stored, ``encoded_count`` encoded.
    """

    def __init__(self, root: Path | None, identity: str, flush_rows: int = 2048) -> None:
        if flush_rows < 1:
            raise ValueError(f"flush_rows must be >= 1, got {flush_rows}")
        self.identity = identity
        self.flush_rows = flush_rows
        self.requested_count = self.distinct_count = self.cache_hits = self.encoded_count = 0
        self._memory: dict[tuple[str, str], np.ndarray] | None = None
        self._shards: dict[int, np.ndarray] = {}
        if root is None:
            self.folder, self._db = None, None
            self._memory = {}
            return
        self.folder = Path(root) / identity
        try:
            self._open()
        except (sqlite3.Error, OSError) as exc:
            if self._db is not None:
                self._db.close()
            raise _unusable(self.folder, exc) from None

    def _open(self) -> None:
        self._db = None
        self.folder.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.folder / "index.sqlite3", timeout=120)
        self._db.execute("PRAGMA journal_mode=WAL")
        with self._db:
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self._db.execute("CREATE TABLE IF NOT EXISTS shards (shard INTEGER PRIMARY KEY AUTOINCREMENT, n_rows INTEGER,"
                             " n_bytes INTEGER, sha256 TEXT)")
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(shards)")}
            for column, kind in (("n_bytes", "INTEGER"), ("sha256", "TEXT")):  # caches made before the checks
                if column not in columns:
                    self._db.execute(f"ALTER TABLE shards ADD COLUMN {column} {kind}")
            self._db.execute("CREATE TABLE IF NOT EXISTS emb (text_sha TEXT, prefix TEXT, shard INTEGER, row INTEGER,"
                             " PRIMARY KEY (text_sha, prefix)) WITHOUT ROWID")

    def __len__(self) -> int:
        if self._memory is not None:
            return len(self._memory)
        return self._db.execute("SELECT COUNT(*) FROM emb").fetchone()[0]

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    # ---- reading -------------------------------------------------------------------------
    def _shard_problem(self, shard: int) -> str | None:
        """Why shard ``shard`` cannot be trusted (missing, wrong length, wrong sha256), or None."""
        path = self.folder / f"shard-{shard:08d}.npy"
        row = self._db.execute("SELECT n_bytes, sha256 FROM shards WHERE shard = ?", (shard,)).fetchone()
        n_bytes, expected = row if row is not None else (None, None)
        if not path.is_file():
            return "the file is missing"
        size = path.stat().st_size
        if n_bytes is not None and size != n_bytes:
            return f"it is {size} bytes long, {n_bytes} were written"
        if expected is not None:
            digest = hashlib.sha256()
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
            if digest.hexdigest() != expected:
                return f"its sha256 is {digest.hexdigest()[:12]}..., {expected[:12]}... was written"
        return None

    def _set_aside(self, shard: int, reason: str) -> None:
        """Rename a bad shard out of the way and forget its rows (their texts become misses)."""
        path = self.folder / f"shard-{shard:08d}.npy"
        aside = None
        if path.exists():
            stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
            aside = path.with_name(f"{path.name}.bad-{stamp}")
            path.rename(aside)
        with self._db:
            self._db.execute("DELETE FROM emb WHERE shard = ?", (shard,))
        where = f"; set aside as {aside.name}" if aside else ""
        warnings.warn(f"embedding cache shard {path} is bad ({reason}){where}; its texts are encoded again",
                      RuntimeWarning, stacklevel=4)

    def _shard(self, shard: int) -> np.ndarray:
        """The shard's rows, checked (length, sha256) the first time this process reads it;
        ``FileNotFoundError`` after setting a bad one aside."""
        if shard not in self._shards:
            problem = self._shard_problem(shard)
            if problem is None:
                try:
                    array = np.load(self.folder / f"shard-{shard:08d}.npy", mmap_mode="r")
                except (ValueError, OSError) as exc:  # a bad header in a shard without a checksum
                    problem = f"numpy cannot read it: {exc}"
            if problem is not None:
                self._set_aside(shard, problem)
                raise FileNotFoundError(shard)
            self._shards[shard] = array
        return self._shards[shard]

    def _lookup(self, shas: list[str], prefix: str) -> dict[str, np.ndarray]:
        """Stored vectors of the given text hashes (absent ones are left out)."""
        if self._memory is not None:
            return {s: self._memory[(s, prefix)] for s in shas if (s, prefix) in self._memory}
        places: list[tuple[str, int, int]] = []
        for start in range(0, len(shas), _SQL_CHUNK):
            part = shas[start:start + _SQL_CHUNK]
            marks = ",".join("?" * len(part))
            places += self._db.execute(
                f"SELECT text_sha, shard, row FROM emb WHERE prefix = ? AND text_sha IN ({marks})", [prefix, *part]
            ).fetchall()
        by_shard: dict[int, list[tuple[str, int]]] = {}
        for sha, shard, row in places:
            by_shard.setdefault(shard, []).append((sha, row))
        found: dict[str, np.ndarray] = {}
        for shard, rows in sorted(by_shard.items()):
            try:
                array = self._shard(shard)
            except FileNotFoundError:  # a bad or missing shard, set aside: its rows are misses
                continue
            block = np.asarray(array[np.array([r for _, r in rows])], dtype=np.float32)
            found.update((sha, block[i]) for i, (sha, _) in enumerate(rows))
        return found

    # ---- writing -------------------------------------------------------------------------
    def _store(self, shas: list[str], vectors: np.ndarray, prefix: str) -> None:
        """Append one block: shard file first (atomic rename), then its index rows."""
        if self._memory is not None:
            self._memory.update(((s, prefix), v) for s, v in zip(shas, vectors))
            return
        with self._db:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
            if row is None:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('dim', ?)", (str(vectors.shape[1]),))
            elif int(row[0]) != vectors.shape[1]:
                raise ValueError(f"cache {self.folder} holds {row[0]}-dim vectors, got {vectors.shape[1]}-dim ones")
            shard = self._db.execute("INSERT INTO shards (n_rows) VALUES (?)", (len(shas),)).lastrowid
        final = self.folder / f"shard-{shard:08d}.npy"
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(vectors, dtype=np.float32))
        data = buffer.getvalue()
        atomic_write(final, lambda tmp: tmp.write_bytes(data))
        with self._db:
            self._db.execute("UPDATE shards SET n_bytes = ?, sha256 = ? WHERE shard = ?",
                             (len(data), hashlib.sha256(data).hexdigest(), shard))
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?)",
                                 [(s, prefix, shard, i) for i, s in enumerate(shas)])

    @contextlib.contextmanager
    def _disk(self):
        """Index and shard errors (a full disk, a folder made read-only meanwhile) as :class:`CacheUnusable`."""
        try:
            yield
        except (sqlite3.Error, OSError) as exc:
            if self.folder is None or isinstance(exc, FileNotFoundError):
                raise
            raise _unusable(self.folder, exc) from None

    # ---- the one public operation --------------------------------------------------------
    def get_or_compute(self, texts: Sequence[str], encode: Callable[[list[str]], np.ndarray],
                       prefix: str = "") -> np.ndarray:
        """Vectors of ``prefix + text`` for each text, shape ``(len(texts), dim)``, float32.

        Distinct texts missing from the cache are sorted by length (longest first, so that
        each encoded batch holds texts of similar length and little padding), passed to
        ``encode`` as ``[prefix + text, ...]`` in blocks of ``flush_rows``, and each block is
        stored as soon as it is encoded.
        """
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of strings, not one string; wrap it in a list")
        distinct, inverse = distinct_in_order(texts)
        shas = [text_sha256(t) for t in distinct]
        with self._disk():
            found = self._lookup(shas, prefix)
        missing = sorted((i for i, s in enumerate(shas) if s not in found), key=lambda i: -len(distinct[i]))
        self.requested_count += len(texts)
        self.distinct_count += len(distinct)
        self.cache_hits += len(distinct) - len(missing)
        for start in range(0, len(missing), self.flush_rows):
            block = missing[start:start + self.flush_rows]
            vectors = np.asarray(encode([prefix + distinct[i] for i in block]), dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(block) or not np.isfinite(vectors).all():
                raise ValueError(f"encode returned shape {vectors.shape} (or non-finite values) for {len(block)} texts")
            block_shas = [shas[i] for i in block]
            with self._disk():
                self._store(block_shas, vectors, prefix)
            found.update(zip(block_shas, vectors))
            self.encoded_count += len(block)
        if not distinct:
            return np.zeros((0, 0), dtype=np.float32)
        matrix = np.stack([found[s] for s in shas])
        return matrix[inverse]
