"""Who records which cell of ``make runs RUNS_CLUSTER=...``: claim files that cannot hang a driver.

Handles: :class:`Claims` (``<store>/.claims/<cell>.claim``, one per cell being recorded, written
whole by linking a complete temporary file into place; an unreadable claim is stale; a claim is
alive while its driver's very process runs: host, boot id, pid and the pid's start time, or for
another host until ``ttl`` seconds have passed) and :func:`wait_for_claims` (the bounded wait
for cells another driver records, saying who holds which claim since when).

Not handled: sending and writing the cells (``reports.run_cluster``), clocks that disagree
between hosts (another host's claim is judged by its file's modification time here).
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from pathlib import Path
from typing import Callable

from chunklab_core.retrieval.recorded_runs import Cell, RunStore

CLAIM_TTL = 6 * 3600.0  # seconds after which another host's claim is taken over
CLAIM_WAIT = 2 * 3600.0  # seconds a driver waits in all for cells another driver records


def boot_id() -> str:
    """This machine's boot id (``/proc/sys/kernel/random/boot_id``; ``""`` where there is none)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return ""


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, ``/proc/<pid>/stat`` field 22), or None."""
    try:
        stat = Path(f"/proc/{int(pid)}/stat").read_text(encoding="ascii", errors="replace")
        return stat.rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError, ValueError):
        return None


def _since(claim: dict) -> str:
    started = claim.get("started")
    if not isinstance(started, (int, float)):
        return "an unknown time"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started))


class Claims:
    """``<store>/.claims/<cell path>.claim`` files: who is recording which cell.

    A claim is written whole (a temporary file linked into place, which fails when one exists),
    so a claim that cannot be read (empty, torn, not a JSON object) is never one being written:
    it is stale and taken over. A claim names its driver's identity: host, boot id, pid and the
    pid's start time; on the same host it is alive only while that very process runs (a reused
    pid or a reboot is not alive); another host's claim expires ``ttl`` seconds after it was made.
    """

    def __init__(self, store: RunStore, ttl: float = CLAIM_TTL) -> None:
        self.root = store.root / ".claims"
        self.store = store
        self.ttl = ttl
        self.me = {"host": socket.gethostname(), "boot": boot_id(), "pid": os.getpid(),
                   "pid_start": process_start(os.getpid()), "driver": uuid.uuid4().hex}

    def path(self, cell: Cell) -> Path:
        return self.root / cell.relative_path().with_suffix(".claim")

    @staticmethod
    def _parse(raw: bytes | None) -> dict | None:
        try:
            claim = json.loads(raw.decode("utf-8")) if raw is not None else None
        except (ValueError, UnicodeDecodeError):
            return None
        return claim if isinstance(claim, dict) and isinstance(claim.get("driver"), str) else None

    @staticmethod
    def _raw(path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except OSError:
            return None

    def _read(self, path: Path) -> dict | None:
        return self._parse(self._raw(path))

    def _alive(self, claim: dict, path: Path) -> bool:
        if claim.get("host") == self.me["host"]:
            if claim.get("boot") and self.me["boot"] and claim["boot"] != self.me["boot"]:
                return False  # made before this machine's last boot
            try:
                pid = int(claim["pid"])
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            except (ValueError, KeyError, TypeError, OverflowError):
                return False  # names no process
            except PermissionError:
                pass  # another user's process: its start time still tells
            running = process_start(pid)
            return not (claim.get("pid_start") and running is not None and running != claim["pid_start"])
        try:
            return time.time() - path.stat().st_mtime < self.ttl
        except OSError:
            return False

    def _create(self, path: Path) -> bool:
        """Write this driver's claim at ``path`` whole, only if none exists (False when one does)."""
        tmp = path.with_name(f"{path.name}.{self.me['driver']}.tmp")
        tmp.write_text(json.dumps(dict(self.me, started=time.time())), encoding="utf-8")
        try:
            os.link(tmp, path)
            return True
        except FileExistsError:
            return False
        finally:
            tmp.unlink(missing_ok=True)

    def claim(self, cell: Cell) -> bool:
        """True when this driver now holds the cell's claim (a dead holder's or an unreadable claim is taken over)."""
        path = self.path(cell)
        path.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(3):
            if self._create(path):
                return True
            raw = self._raw(path)
            if raw is None:  # released in between: try again
                continue
            held = self._parse(raw)
            if held is not None and held.get("driver") == self.me["driver"]:
                return True
            if held is not None and self._alive(held, path):
                return False
            grave = path.with_name(path.name + f".stale-{self.me['driver']}")
            try:
                os.replace(path, grave)
            except FileNotFoundError:
                continue
            if self._raw(grave) != raw:  # another driver claimed it in between: give it back
                os.replace(grave, path)
                return False
            grave.unlink(missing_ok=True)
        return False

    def holds(self, cell: Cell) -> bool:
        held = self._read(self.path(cell))
        return held is not None and held.get("driver") == self.me["driver"]

    def holder(self, cell: Cell) -> dict | None:
        """The claim of another live driver on ``cell`` (None: none, or a stale one)."""
        path = self.path(cell)
        held = self._read(path)
        if held is None or held.get("driver") == self.me["driver"] or not self._alive(held, path):
            return None
        return held

    def claimed_by_other(self, cell: Cell) -> bool:
        return self.holder(cell) is not None

    def release(self, cell: Cell) -> None:
        if self.holds(cell):
            self.path(cell).unlink(missing_ok=True)


def wait_for_claims(waiting: list[dict], claims: Claims, deadline: float, poll: float, report_every: float,
                     log: Callable[[str], None], counts: dict, bar) -> list[dict]:
    """Wait until no other live driver holds a claim of ``waiting``'s cells, printing who holds
    which claim and since when every ``report_every`` seconds; at ``deadline`` (monotonic) the cells
    still claimed are left to their holders (counted ``claimed elsewhere``). The cells to look at again."""
    reported = None
    while True:
        held = [(spec, claims.holder(Cell(**spec["cell"]))) for spec in waiting]
        held = [(spec, claim) for spec, claim in held if claim is not None]
        if not held:
            return waiting
        now = time.monotonic()
        if now >= deadline:
            for spec, claim in held:
                log(f"not recorded here: {Cell(**spec['cell']).describe()} is still claimed by {_who(claim)}; "
                    "left to that driver (run make runs again once it is done)")
                counts["claimed elsewhere"] += 1
                bar.update(1)
            kept = {id(spec) for spec, _ in held}
            return [spec for spec in waiting if id(spec) not in kept]
        if reported is None or now - reported >= report_every:
            reported = now
            lines = [f"  {Cell(**spec['cell']).describe()}: {_who(claim)}" for spec, claim in held[:10]]
            more = f"\n  ... and {len(held) - 10} more" if len(held) > 10 else ""
            log(f"waiting for {len(held)} cell(s) another driver is recording (at most "
                f"{max(0.0, deadline - now):.0f} s more):\n" + "\n".join(lines) + more)
        time.sleep(min(poll, max(0.0, deadline - now)))


def _who(claim: dict) -> str:
    return (f"host {claim.get('host')}, pid {claim.get('pid')}, driver {str(claim.get('driver'))[:8]}, "
            f"since {_since(claim)}")
