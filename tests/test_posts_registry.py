"""Issue 36: the one list of posts (``reports.posts``) and what is derived from it."""

import re
import subprocess

import pytest

from chunklab_core.core.paths import NOTEBOOKS_DIR, PROJ_ROOT
from chunklab_core.reports import posts, run_recording
from chunklab_core.reports.post00 import findings


def test_every_notebook_source_is_a_registered_post_and_back():
    sources = sorted(p.stem for p in (NOTEBOOKS_DIR / "src").glob("[0-9][0-9]_*.ipynb"))
    assert sorted(p.name for p in posts.POSTS) == sources
    assert all(p.name.startswith(p.number + "_") for p in posts.POSTS)
    assert all((PROJ_ROOT / p.package.replace(".", "/")).is_dir() for p in posts.POSTS)


def test_the_derived_lists():
    assert run_recording.POSTS == posts.recorded_posts() == (
        "02_retrievers", "01_chunking", "03_uncertainty", "05_answers", "04_questions", "07_reranking",
        "08_library_splitters")
    assert [row[0] for row in findings.READING_ORDER] == ["01", "03", "02", "08", "04", "05", "06", "07"]
    assert all(row[1] and row[2] for row in findings.READING_ORDER)


def test_the_fragment_gives_each_post_its_prerequisites():
    fragment = posts.make_fragment()
    rules = dict(re.findall(r"^(notebooks/\d\d_\w+\.ipynb): (?!POST_ARGS)(.*)$", fragment, re.M))
    assert set(rules) == {p.notebook for p in posts.POSTS}
    assert "notebooks/01_chunking.ipynb" in rules["notebooks/03_uncertainty.ipynb"].split()
    assert "$(FINDINGS_TABLES)" in rules["notebooks/00_findings.ipynb"]
    assert "$(filter-out notebooks/00_findings.ipynb,$(NOTEBOOKS))" in rules["notebooks/00_findings.ipynb"]
    assert "notebooks/02_retrievers.ipynb: POST_ARGS = $(OWN_DOCS)" in fragment
    assert "$(if $(RERANK_CALLS),notebooks/07_reranking.ipynb,)" in fragment
    assert posts.post("07").inputs == ("$(RERANK_CALLS)",)


def test_make_executes_post_03_after_post_01_through_the_pattern_rule(tmp_path):
    dry = subprocess.run(["make", "-n", "-B", "-o", ".venv/.installed", f"POSTS_MK={tmp_path}/posts.mk",
                          f"NOTEBOOK_DEPS={tmp_path}/deps.mk", "notebooks/03_uncertainty.ipynb"],
                         capture_output=True, text=True, cwd=PROJ_ROOT, timeout=120)
    runs = [line for line in dry.stdout.splitlines() if "notebook_run --kernel" in line]
    assert [line.split()[-1] for line in runs] == ["notebooks/01_chunking.ipynb", "notebooks/03_uncertainty.ipynb"]


def test_post00_findings_cover_exactly_the_posts_whose_tables_it_reads_in_the_lists_order():
    cited = {n for key in findings.POST_FINDINGS for n in re.findall(r"\b\d\d\b", key)}
    assert cited == {p.number for p in posts.POSTS if p.tables}
    order = [p.number for p in posts.POSTS]
    firsts = [order.index(key[:2]) for key in findings.POST_FINDINGS]
    assert firsts == sorted(firsts)
    with pytest.raises(KeyError, match="no post '09'"):
        findings._in_post_order({"09": lambda data_dir: []})


def test_no_module_keeps_its_own_list_of_posts():
    """No string naming a post's notebook (``02_retrievers``, ``notebooks/02_retrievers.ipynb``)
    in the package outside ``reports.posts``: every list of posts is derived from it."""
    import ast

    names = {p.name for p in posts.POSTS} | {p.notebook for p in posts.POSTS} | {p.source for p in posts.POSTS} | {
        f"{p.name}.ipynb" for p in posts.POSTS}
    found = []
    for path in sorted((PROJ_ROOT / "chunklab_core").rglob("*.py")):
        if path.name == "posts.py" and path.parent.name == "reports":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                found.append(f"{path.relative_to(PROJ_ROOT)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_make_site_publishes_the_registered_posts_and_a_new_post_09_is_one_line_here(tmp_path):
    """In a scratch copy: a post 09 registered by one ``Post`` line (with its notebook) is published
    by `make site`; an executed notebook no post registers (``10_stray``) is not."""
    import shutil

    (tmp_path / "chunklab_core/reports").mkdir(parents=True)
    (tmp_path / "chunklab_core/decision").mkdir(parents=True)
    shutil.copy(PROJ_ROOT / "chunklab_core/decision/series.json", tmp_path / "chunklab_core/decision")  # posts.py reads it
    (tmp_path / "notebooks/src").mkdir(parents=True)
    shutil.copy(PROJ_ROOT / "Makefile", tmp_path)
    source = (PROJ_ROOT / "chunklab_core/reports/posts.py").read_text(encoding="utf-8")
    line = '    Post("09", "09_new_post", "chunklab_core.reports.post09", "A new post", "what it adds"),\n'
    source = source.replace('    Post("00", "00_findings"', line + '    Post("00", "00_findings"', 1)
    (tmp_path / "chunklab_core/reports/posts.py").write_text(source, encoding="utf-8")
    for name in ("notebooks/01_chunking.ipynb", "notebooks/09_new_post.ipynb", "notebooks/src/09_new_post.ipynb",
                 "notebooks/10_stray.ipynb"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "deps.mk").write_text("")
    dry = subprocess.run(["make", "-n", "-o", ".venv/.installed", "-o", "env", "-o", "deps.mk", "NOTEBOOK_DEPS=deps.mk",
                          "site"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert dry.returncode == 0, dry.stderr
    published = next(line for line in dry.stdout.splitlines() if "reports.website" in line).split()
    assert "notebooks/09_new_post.ipynb" in published and "notebooks/01_chunking.ipynb" in published
    assert "notebooks/10_stray.ipynb" not in published


def test_a_posts_parameters_are_declared_once_and_read_by_its_notebook_the_pool_and_the_lab():
    import json

    from chunklab_core.decision import candidates
    from chunklab_core.reports import lab, pool

    p02 = posts.post("02")
    # one list, decision/series.json: the pool (below reports) and posts.py (the system Python) both read it
    assert p02.strategies is posts.SERIES and lab.LabConfig().budget_strategies is p02.strategies
    assert pool.SERIES == posts.SERIES and candidates.SERIES_FILE == posts.SERIES_FILE
    assert p02.parameters(None, None) == (list(p02.strategies), list(p02.ks))
    assert p02.parameters(["fixed_500"], [5]) == (["fixed_500"], [5])  # papermill's value wins
    for number in ("01", "02"):
        cells = json.loads((PROJ_ROOT / posts.post(number).source).read_text(encoding="utf-8"))["cells"]
        parameters = next("".join(c["source"]) for c in cells if "parameters" in c["metadata"].get("tags", []))
        assert re.search(r"^STRATEGIES = None\b", parameters, re.M) and re.search(r"^KS = None\b", parameters, re.M)
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert re.search(rf'^STRATEGIES, KS = (posts\.)?post\("{number}"\)\.parameters\(STRATEGIES, KS\)$', code, re.M)


def test_post_02s_retrievers_are_read_when_used_by_its_notebook_and_the_lab(monkeypatch):
    """Every registered retriever, asked at the call: one registered after ``reports.lab`` was
    imported (a user's module or entry point) is in post 02's matrix and the lab's budget panel,
    which replays exactly the cells post 02 records (issue 47's TF-IDF story)."""
    import json

    from chunklab_core.data import corpora as corpora_module
    from chunklab_core.evaluation import matrix as matrix_module
    from chunklab_core.reports import lab
    from chunklab_core.retrieval.registry import RetrieverSpec, register_retriever, registered

    p02 = posts.post("02")
    assert p02.retrievers is None and lab.LabConfig().budget_retrievers is None
    assert p02.retriever_names()[:3] == ["bm25", "dense", "hybrid"]  # the series' order: post 02's tables
    assert p02.retriever_names(["bm25"]) == ["bm25"]  # papermill's value wins
    register_retriever(RetrieverSpec("late_b47", "Late", needs_model=False, factory=lambda **_: None))
    assert "late_b47" in registered() and p02.retriever_names()[-1] == "late_b47"

    asked = []

    class Stop(Exception):
        pass

    def fake_run_matrix(corpora, strategies, retrievers, *args, **kwargs):
        asked.append(list(retrievers))
        raise Stop

    monkeypatch.setattr(corpora_module, "load_corpus", lambda *a, **k: None)
    monkeypatch.setattr(matrix_module, "run_matrix", fake_run_matrix)
    with pytest.raises(Stop):
        lab.budget_tables(lab.LabConfig())
    assert asked == [p02.retriever_names()] and "late_b47" in asked[0]
    with pytest.raises(Stop):
        lab.budget_tables(lab.LabConfig(budget_retrievers=("bm25",)))
    assert asked[-1] == ["bm25"]

    cells = json.loads((PROJ_ROOT / p02.source).read_text(encoding="utf-8"))["cells"]
    parameters = next("".join(c["source"]) for c in cells if "parameters" in c["metadata"].get("tags", []))
    assert re.search(r"^RETRIEVERS = None\b", parameters, re.M)
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert re.search(r'^RETRIEVERS = posts\.post\("02"\)\.retriever_names\(RETRIEVERS\)$', code, re.M)


def test_the_series_strategies_are_one_file_read_by_the_pool_and_by_posts_py_run_with_the_system_python(tmp_path):
    """``decision/series.json`` is the one list: no module spells it out, the pool and posts.py read
    it, posts.py as the Makefile runs it (a script, standard library only, no package import), and
    every name in it is a registered strategy."""
    import ast
    import json
    import shutil
    import sys

    from chunklab_core.chunking import STRATEGIES
    from chunklab_core.decision import candidates

    listed = tuple(json.loads(candidates.SERIES_FILE.read_text(encoding="utf-8"))["strategies"])
    assert listed == candidates.SERIES == posts.post("02").strategies and set(listed) <= set(STRATEGIES)
    spelled = []  # the list written out as a literal anywhere in the package is a second copy
    for path in sorted((PROJ_ROOT / "chunklab_core").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List)):
                if tuple(getattr(e, "value", None) for e in node.elts) == listed:
                    spelled.append(f"{path.relative_to(PROJ_ROOT)}:{node.lineno}")
    assert spelled == []
    script = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('posts', sys.argv[1]); "
              "m = importlib.util.module_from_spec(spec); sys.modules['posts'] = m; spec.loader.exec_module(m); "
              "assert 'chunklab_core' not in sys.modules; print(','.join(m.SERIES))")
    system = shutil.which("python3") or sys.executable
    shown = subprocess.run([system, "-I", "-c", script, str(PROJ_ROOT / "chunklab_core/reports/posts.py")],
                           capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert tuple(shown.stdout.strip().split(",")) == listed
