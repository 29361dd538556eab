"""`make help` lists every target and every variable of the Makefile, with nothing left unexpanded."""

from __future__ import annotations

import re
import subprocess

from chunklab_core.core.paths import PROJ_ROOT


def _help() -> str:
    done = subprocess.run(["make", "--no-print-directory", "help"], capture_output=True, text=True,
                          cwd=PROJ_ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)


def test_help_lists_every_target_and_variable():
    makefile = (PROJ_ROOT / "Makefile").read_text(encoding="utf-8")
    text = _help()
    listed = set(re.findall(r"^  (\S+)", text, flags=re.M))
    phony = {t for line in re.findall(r"^\.PHONY:([^#\n]*)", makefile, flags=re.M) for t in line.split()
             if not t.endswith(".ipynb") and re.fullmatch(r"[a-z][a-z0-9-]*", t)}
    assert phony <= listed, f"targets without a ## description: {sorted(phony - listed)}"
    variables = set(re.findall(r"^([A-Z_]+)\s*\?=", makefile, flags=re.M))
    assert variables <= listed, f"variables missing from `make help`: {sorted(variables - listed)}"
    assert "DOCS" in listed and "QUESTIONS" in listed and "CI" in listed
    assert "$" not in text  # no literal $$NAME or $(NAME) in the help text
