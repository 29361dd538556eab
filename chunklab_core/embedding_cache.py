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

Model identity (``model_identity``): the model's label plus a fingerprint of its folder. Small
files (configs, tokenizer, vocabulary: <= 1 MiB) are hashed in full; large files (weights)
contribute their size and a sha256 of their first and last MiB. That costs milliseconds on
every load, unlike hashing 400 MB of weights, and still separates different models, a changed
tokenizer or config, a truncated file, and fine-tuned weights of the same architecture (their
bytes differ at the head and tail). An edit confined to the middle of a weight file, at the
same size, would not be seen; delete the model's cache folder after such surgery.

Not handled: eviction (delete a model's folder to drop it), sharing between machines, vectors
that are not float32.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .atomic_files import atomic_write

_SMALL_FILE_BYTES = 1 << 20
_SAMPLE_BYTES = 1 << 20
_IGNORED_FILES = {"README.md", ".gitattributes", "desktop.ini"}
_SQL_CHUNK = 500  # keys per "IN (...)" query, well under sqlite's variable limit


def text_sha256(text: str) -> str:
    """sha256 hex digest of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_fingerprint(folder: Path) -> str:
    """16-hex fingerprint of a model folder (see the module docstring for what it covers)."""
    digest = hashlib.sha256()
    files = sorted(p for p in Path(folder).rglob("*") if p.is_file() and p.name not in _IGNORED_FILES
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    for path in files:
        size = path.stat().st_size
        digest.update(f"{path.relative_to(folder).as_posix()}\0{size}\0".encode())
        with open(path, "rb") as handle:
            if size <= _SMALL_FILE_BYTES:
                digest.update(handle.read())
            else:
                digest.update(handle.read(_SAMPLE_BYTES))
                handle.seek(size - _SAMPLE_BYTES)
                digest.update(handle.read(_SAMPLE_BYTES))
    return digest.hexdigest()[:16]


def model_identity(label: str, folder: Path) -> str:
    """``<label>__<fingerprint>``, safe as a folder name."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._") or "model"
    return f"{safe}__{model_fingerprint(folder)}"


def distinct_in_order(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Distinct texts in first-seen order, and for each input the position of its text there."""
    first: dict[str, int] = {}
    inverse = np.fromiter((first.setdefault(t, len(first)) for t in texts), dtype=np.int64, count=len(texts))
    return list(first), inverse


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
        self.folder.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.folder / "index.sqlite3", timeout=120)
        self._db.execute("PRAGMA journal_mode=WAL")
        with self._db:
            self._db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            self._db.execute("CREATE TABLE IF NOT EXISTS shards (shard INTEGER PRIMARY KEY AUTOINCREMENT, n_rows INTEGER)")
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
    def _shard(self, shard: int) -> np.ndarray:
        if shard not in self._shards:
            self._shards[shard] = np.load(self.folder / f"shard-{shard:08d}.npy", mmap_mode="r")
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
            except FileNotFoundError:  # shard deleted by hand: treat its rows as misses
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
        def write(tmp: Path) -> None:
            with open(tmp, "wb") as out:
                np.save(out, np.ascontiguousarray(vectors, dtype=np.float32))

        atomic_write(final, write)
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?)",
                                 [(s, prefix, shard, i) for i, s in enumerate(shas)])

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
            self._store(block_shas, vectors, prefix)
            found.update(zip(block_shas, vectors))
            self.encoded_count += len(block)
        if not distinct:
            return np.zeros((0, 0), dtype=np.float32)
        matrix = np.stack([found[s] for s in shas])
        return matrix[inverse]
