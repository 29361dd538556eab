"""Data registry: where each public data set comes from, its checksum, license and citation.

Handles: fetching a registered file into the gitignored cache (``paths.RAW_DIR``) from its
upstream URL, or from a local mirror folder named by ``CHUNKLAB_DATA_MIRROR`` (CI and this
project's machines have no internet and point it at ``../shared/data``); verifying the
sha256 of the file's *content* (the decompressed bytes, so a file gzipped by the mirror and
the raw upstream file verify the same way); writing through a temporary file and an atomic
rename so a failed or interrupted fetch never leaves a half-written file in the cache.

Errors name the file and give advice that fits where it was read from: a damaged file in the
mirror is to be replaced in the mirror (fetching again would read the same file); a damaged
cached copy is deleted and downloaded again automatically. :func:`fetch_all` (``make data``)
checks every file and reports every problem at once; :func:`main` is the command
``chunklab-data [KEY ...]`` (also ``python -m chunklab_core.data.registry``).

Not handled: parsing (``squad``, ``longdocs``, ``loaders``).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import shutil
import sys
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path

from chunklab_core.core import paths
from chunklab_core.core.atomic_files import atomic_write
from chunklab_core.core.cli_errors import command_edge

MIRROR_ENV = "CHUNKLAB_DATA_MIRROR"


class DataError(RuntimeError):
    """A data file is missing, unreadable or does not match its checksum."""


@dataclass(frozen=True)
class DataFile:
    """One registered file.

    ``filename`` is its name in the cache and in a mirror (relative path); ``gzipped`` says
    the cached/mirrored file is gzip-compressed while ``url`` serves the raw bytes;
    ``sha256`` is the checksum of the raw (decompressed) content.
    """

    key: str
    filename: str
    url: str
    sha256: str
    size: int
    gzipped: bool
    dataset: str
    license: str
    citation: str


_LEVAL = "https://raw.githubusercontent.com/OpenLMLab/LEval/cd34b050269148aed75acbbe4a599873ad0f37e9/LEval-data/Open-ended-tasks/"
_LEVAL_CITE = (
    "An et al., L-Eval: Instituting Standardized Evaluation for Long Context Language Models, "
    "arXiv:2307.11088"
)
_CHROMA = (
    "https://raw.githubusercontent.com/brandonstarxel/chunking_evaluation/"
    "d451fc4cf56e417b755994b4ca5212fd5057c0d2/chunking_evaluation/evaluation_framework/"
    "general_evaluation_data/"
)
_CHROMA_CITE = "Smith & Troynikov, Evaluating Chunking Strategies for Retrieval, Chroma technical report, 2024"

REGISTRY: dict[str, DataFile] = {
    f.key: f
    for f in [
        DataFile(
            "squad-dev", "squad-v1.1-dev.json.gz",
            "https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json",
            "95aa6a52d5d6a735563366753ca50492a658031da74f301ac5238b03966972c9", 4854279, True,
            "SQuAD v1.1 dev", "CC BY-SA 4.0",
            "Rajpurkar et al., SQuAD: 100,000+ Questions for Machine Comprehension of Text, EMNLP 2016",
        ),
        DataFile(
            "nq-longdocs", "leval-nq-longdocs.jsonl.gz", _LEVAL + "natural_question.jsonl",
            "0daf58b082041c3e384d8ef990981c9e9cb5de7c49e9219ab9f8c1edb2dea568", 1538576, True,
            "Natural Questions long-document subset (via L-Eval)", "CC BY-SA 3.0 (NQ); L-Eval repository GPL-3.0",
            "Kwiatkowski et al., Natural Questions, TACL 2019; " + _LEVAL_CITE,
        ),
        DataFile(
            "qasper-papers", "leval-qasper-papers.jsonl.gz", _LEVAL + "scientific_qa.jsonl",
            "db11d9cc4c928a3dc4bef6075a8223b785a117b4066439d4c55e6bc4e817f4c0", 504366, True,
            "QASPER subset (via L-Eval)", "CC BY 4.0 (QASPER); L-Eval repository GPL-3.0",
            "Dasigi et al., QASPER, NAACL 2021; " + _LEVAL_CITE,
        ),
        DataFile(
            "cuad-contracts", "leval-cuad-contracts.jsonl.gz", _LEVAL + "legal_contract_qa.jsonl",
            "ed78010152c83effc5191592f92e2c0821f05329789cb546898d5d6290208dd8", 2676528, True,
            "CUAD contract subset (via L-Eval)", "CC BY 4.0 (CUAD); L-Eval repository GPL-3.0",
            "Hendrycks et al., CUAD, NeurIPS 2021 Datasets track; " + _LEVAL_CITE,
        ),
        DataFile(
            "qmsum-test", "qmsum-test.jsonl.gz",
            "https://raw.githubusercontent.com/Yale-LILY/QMSum/83d7768c1f2b4dfeb091385d3dc7e239b8e5bb7e/data/ALL/jsonl/test.jsonl",
            "6bcd428211260ad2efae3af76cbaf6a7f5ae4bb5e1e59c45a4b8e89539cb9208", 2746108, True,
            "QMSum test split", "MIT (repository)",
            "Zhong et al., QMSum, NAACL 2021",
        ),
        DataFile(
            "chroma-questions", "chroma-chunking-eval/questions_df.csv", _CHROMA + "questions_df.csv",
            "3ab3901889b8900f43775537bf12d36bd6614255fc59124faca31bede1dda7a3", 236464, False,
            "Chroma chunking evaluation (questions)", "MIT", _CHROMA_CITE,
        ),
        *[
            DataFile(
                f"chroma-{name}", f"chroma-chunking-eval/corpora/{name}.md", _CHROMA + f"corpora/{name}.md",
                sha, size, False, f"Chroma chunking evaluation ({name})", "MIT", _CHROMA_CITE,
            )
            for name, sha, size in [
                ("chatlogs", "543a98f82b2a6a492349fd7f8c9d6c3e78d1a4af81d13c79a7fd513c3f65bda6", 40013),
                ("finance", "1c48d0156820abc88e46e5c992fa0cd2708b07ae59a3771b2b18234b7208561f", 737905),
                ("pubmed", "0fd9242ffb253695e5d0f0215cb79a66a2a8f1236591e764c60d370747684ced", 501965),
                ("state_of_the_union", "6fc21d560d31eb2421e337596feea0f83f1fa9ca02c6c4e47bc26959d7531b37", 48995),
                ("wikitexts", "74cafcdb771185ecb9f22cc41b73e2e44477e0636ecf9cf1f96fd6ee0f4b86c0", 118612),
            ]
        ],
    ]
}


def content_sha256(path: Path, gzipped: bool) -> str:
    """sha256 of a file's content, decompressing gzip first when ``gzipped``."""
    digest = hashlib.sha256()
    opener = gzip.open if gzipped else open
    try:
        with opener(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:  # zlib.error: a changed byte in the stream
        raise DataError(f"{path}: cannot be read ({type(exc).__name__}: {exc})") from exc
    return digest.hexdigest()


def _advice(entry: DataFile, mirror: str | os.PathLike | None) -> str:
    """What to do about a bad copy of ``entry``, for where it was read from."""
    if mirror:
        return (f"the copy in the data mirror {Path(mirror).resolve()} (set by {MIRROR_ENV}) is damaged: "
                f"replace {entry.filename} there with a good copy (upstream: {entry.url}); fetching "
                "again would read the same file")
    return f"the cached copy was deleted; run `make data` to download {entry.filename} again from {entry.url}"


def _entry(key: str) -> DataFile:
    if key not in REGISTRY:
        raise DataError(f"unknown data set {key!r}; registered: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[key]


def verify(path: Path, entry: DataFile) -> None:
    """Raise ``DataError`` naming the file and the expected checksum unless it matches."""
    actual = content_sha256(path, entry.gzipped)
    if actual != entry.sha256:
        raise DataError(
            f"{path}: checksum mismatch for {entry.filename} ({entry.dataset}): "
            f"expected content sha256 {entry.sha256}, got {actual}"
        )


def _download(entry: DataFile, tmp: Path) -> None:
    with urllib.request.urlopen(entry.url, timeout=60) as response:
        opener = gzip.open if entry.gzipped else open
        with opener(tmp, "wb") as out:
            shutil.copyfileobj(response, out)


def fetch(key: str, mirror: str | os.PathLike | None = None, cache_dir: Path | None = None) -> Path:
    """Path to the verified local copy of registered file ``key``.

    Order: a mirror folder (argument, else ``$CHUNKLAB_DATA_MIRROR``) is read in place
    after verification; otherwise the cached copy (re-verified; a corrupt cached copy is
    replaced); otherwise the upstream URL is downloaded into the cache through a
    temporary file and verified before the atomic rename.
    """
    entry = _entry(key)
    mirror = mirror if mirror is not None else os.environ.get(MIRROR_ENV)
    if mirror:
        path = Path(mirror) / entry.filename
        if not path.is_file():
            raise DataError(
                f"{entry.filename} not found in the data mirror {Path(mirror).resolve()} "
                f"(set by {MIRROR_ENV}); expected content sha256 {entry.sha256}"
            )
        try:
            verify(path, entry)
        except DataError as exc:
            raise DataError(f"{exc}; {_advice(entry, mirror)}") from exc
        return path
    cache = (cache_dir or paths.RAW_DIR) / entry.filename
    if cache.is_file():
        try:
            verify(cache, entry)
            return cache
        except DataError:
            cache.unlink()
    def write(tmp: Path) -> None:
        try:
            _download(entry, tmp)
        except OSError as exc:
            raise DataError(
                f"cannot download {entry.filename} from {entry.url} ({exc}); without internet, "
                f"set {MIRROR_ENV} to a folder holding {entry.filename}"
            ) from exc
        verify(tmp, entry)
    atomic_write(cache, write, suffix=".part")
    return cache


def fetch_all(keys: list[str] | None = None) -> dict[str, Path]:
    """Fetch and verify every registered file (or ``keys``); used by ``make data``.

    Every file is tried; one ``DataError`` then lists every problem found.
    """
    found, problems = {}, []
    for key in keys or sorted(REGISTRY):
        try:
            found[key] = fetch(key)
        except DataError as exc:
            problems.append(f"  - {key}: {exc}")
    if problems:
        raise DataError(f"{len(problems)} of {len(keys or REGISTRY)} data file(s) failed:\n" + "\n".join(problems))
    return found


def open_text(key: str) -> str:
    """The verified content of ``key`` as UTF-8 text."""
    entry = _entry(key)
    path = fetch(key)
    opener = gzip.open if entry.gzipped else open
    with opener(path, "rb") as handle:
        return handle.read().decode("utf-8")


@command_edge
def main(argv: list[str] | None = None) -> int:
    """``chunklab-data [KEY ...]`` (``make data``): fetch and verify every registered file, or ``KEY``s."""
    parser = argparse.ArgumentParser(
        description="Fetch every registered data set (or read the folder named by "
                    f"{MIRROR_ENV}) into the cache and verify its sha256.")
    parser.add_argument("keys", nargs="*", metavar="KEY",
                        help="only these files (default: all): " + ", ".join(sorted(REGISTRY)))
    args = parser.parse_args(argv)
    unknown = [key for key in args.keys if key not in REGISTRY]
    if unknown:
        parser.error(f"unknown data file(s) {', '.join(unknown)}; known: {', '.join(sorted(REGISTRY))}")
    try:
        fetched = fetch_all(args.keys or None)
    except DataError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for name, location in fetched.items():
        entry = REGISTRY[name]
        print(f"ok  {name:26s} {entry.sha256[:12]}  {entry.license:40s} {location}")
    return 0


if __name__ == "__main__":  # ``python -m chunklab_core.data.registry`` = ``chunklab-data``
    raise SystemExit(main())
