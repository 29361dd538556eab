"""The config file of a run on your own documents: YAML, validated with every problem listed at once.

Every key is optional; a missing key takes the default below. An example with every key::

    strategies:                       # registered names, or sized variants (mappings)
      - recursive_500                 # any registered name (python -m chunklab_core.own.cli strategies)
      - fixed_tokens_512_o64          # 512-token windows sharing 64 tokens
      - {kind: fixed, size: 800, overlap: 200}            # characters (the default unit)
      - {kind: fixed, size: 512, overlap: 64, unit: tokens}   # cl100k_base tokens
      - {kind: recursive, size: 512, overlap: 64, unit: tokens}
      - {kind: semantic, floor: 200, max: 1000}           # embedding breakpoints, characters
      - {kind: semantic, floor: 0, max: 1000, unit: tokens, percentile: 95}
      - {kind: structure, max: 256}                       # headings/tables/lists packed, tokens
      - {kind: structure_sections, max: 800}              # one chunk per section, split over 800 tokens
    retrievers: [bm25, dense, hybrid]
    models: [all-MiniLM-L6-v2]        # all-MiniLM-L6-v2 / minilm, all-mpnet-base-v2 / mpnet,
                                      # or the path of a local sentence-transformers folder
    backend: auto                     # auto (the default), onnx or torch; see below
    quantize: int8                    # off by default: int8 weights for the ONNX path; see below
    k: 5                              # the cut-off of the recommendation (recall@k)
    budgets: [500, 1000, 2000, 4000]  # tokens a question may read (recall at a budget)
    recall_target: 0.8                # report the tokens each cell needs to reach this recall
    resamples: 10000                  # paired bootstrap resamples
    seed: 20260729
    threshold: 0.9                    # fuzzy gold threshold

Sized variants are registered as strategies named by their sizes (``fixed_chars_800_o200``,
``fixed_tokens_512_o64``, ``recursive_tokens_512_o64``, ``semantic_floor200_max1000``,
``semantic_tokens_floor0_max1000_p95``, ``structure_tokens_256``, ``structure_sections_tokens_800``)
through ``chunking.register_variant``. Units: ``characters`` (the default) or ``tokens`` for
fixed and recursive (``overlap`` in the same unit; recursive overlap in tokens only) and for
semantic (``floor`` from 0 = no floor, ``max``; ``percentile``, default 80, breaks after
sentences whose distance to the next exceeds that percentile); ``tokens`` only for
``structure`` (packs sections up to ``max``) and ``structure_sections`` (one chunk per
section, split only when longer than ``max``). Overlap must be below the size.

The kinds, their units, keys, names and labels are not listed here: they are read from the
registered strategies' declarations (``StrategySpec.sizing`` and ``sizes``,
:mod:`chunklab_core.chunking.sizing`; :func:`sized_kinds`), so a strategy registered with a
``sizing`` is sizeable in this config with no change to this file.

Backend: ``auto`` embeds through ONNX Runtime without importing torch for the models whose ONNX
vectors equal the PyTorch ones within ``onnx_embedding.EQUAL_COSINE_DISTANCE`` (cosine
distance; ``onnx_embedding.ONNX_EQUAL``: all-MiniLM-L6-v2, all-mpnet-base-v2) and through
PyTorch (sentence-transformers) for any other model; ``onnx`` forces ONNX for every model,
``torch`` opts out of ONNX. ``quantize: int8`` (off by default; ONNX only, so not with
``backend: torch``) embeds with the dynamic int8 quantisation of the ONNX export
(``onnx_embedding.quantized_path``, built locally in the user's cache): faster, and its
recall@5 on post 02's SQuAD sample has a paired interval against fp32 that contains 0
(``scripts/bench_int8.py``), but its vectors are not those of the PyTorch path.

Read strictly (:func:`chunklab_core.data.question_file.parse_yaml`, the questions file's loader):
a key given twice (``k: 10`` then ``k: 1``) is an error naming both lines, merge keys
(``<<: *base``) work, deep nesting and alias bombs are refused; a file that is not UTF-8 text (a
PNG given as the config) is refused as such. A model folder must look like one
(:func:`model_folder_problem`: a ``config.json`` whose ``model_type`` transformers knows, weights
and a tokenizer) before anything runs.

Not handled: per-strategy retrievers, parameters of the retrievers (BM25's k1/b, RRF's k),
models that need a network download (folders only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from chunklab_core.core import bounds
from chunklab_core.core.bounds import shown
from chunklab_core.core.seeds import DEFAULT_SEED
from chunklab_core.chunking import STRATEGIES, register_variant, strategy_label
from chunklab_core.chunking.sizing import CEILING_KEYS, sizing_unit
from chunklab_core.data.loaders import ValidationError
from chunklab_core.data.question_file import parse_yaml
from chunklab_core.evaluation.measures import KS
from chunklab_core.retrieval.model_assembly import shipped_label
from chunklab_core.retrieval.registry import needs_model, registered

DEFAULT_STRATEGIES = ("fixed_500", "fixed_500_o125", "recursive_500", "sentence_window_2", "semantic_tfidf",
                      "fixed_1000", "fixed_tokens_256", "fixed_tokens_512", "structure_aware",
                      "semantic_embedding")
DEFAULT_PERCENTILE = 80.0  # the series' semantic breakpoint percentile (chunklab 0.5.0 uses 95)
KEY_DEFAULTS = {"overlap": 0, "percentile": DEFAULT_PERCENTILE}  # an entry's value when the key is left out
UNIT_WORDS = {"chars": "characters", "tokens": "tokens", "sentences": "sentences"}  # a spec's unit -> the config's word
MODEL_ALIASES = ("all-MiniLM-L6-v2", "minilm", "all-mpnet-base-v2", "mpnet")
CONFIG_MAX_VALUES = 10_000  # values after expanding aliases; a config with every key holds a few hundred
BYTES_PER_RANK = 48  # per question, rank and cell: ids, scores, judgment codes, grades, first gold, tokens (8 each)
BYTES_PER_DRAW = 8  # per question and resample: the paired bootstrap's drawn index


@dataclass
class OwnConfig:
    """A validated config; ``strategies`` holds registered strategy names."""

    strategies: list[str] = field(default_factory=lambda: list(DEFAULT_STRATEGIES))
    retrievers: list[str] = field(default_factory=lambda: list(registered()))
    models: list[str] = field(default_factory=lambda: ["all-MiniLM-L6-v2"])
    backend: str = "auto"
    quantize: str | None = None
    k: int = 5
    budgets: list[int] = field(default_factory=lambda: [500, 1000, 2000, 4000])
    recall_target: float = 0.8
    resamples: int = 10_000
    seed: int = DEFAULT_SEED
    threshold: float = 0.9

    @property
    def embedding_backend(self) -> str:
        """The ``DenseRetriever`` backend: ``backend``, or ``"onnx-int8"`` with ``quantize: int8``."""
        return "onnx-int8" if self.quantize == "int8" else self.backend

    @property
    def ks(self) -> list[int]:
        """Cut-offs scored: the series' ``measures.KS`` (1, 3, 5, 10) and k."""
        return sorted({*KS, self.k})

    def as_parameters(self) -> dict[str, Any]:
        """The notebook's parameters (papermill) for this config."""
        return {"STRATEGIES": list(self.strategies), "RETRIEVERS": list(self.retrievers),
                "MODELS": list(self.models), "BACKEND": self.embedding_backend, "K": self.k, "KS": self.ks,
                "BUDGETS": list(self.budgets), "RECALL_TARGET": self.recall_target,
                "RESAMPLES": self.resamples, "SEED": self.seed, "THRESHOLD": self.threshold}


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def sized_kinds() -> dict[str, dict[str, str]]:
    """kind -> {unit: the registered strategy a sized entry in that unit is built from}, read from
    the specs' declared ``sizing`` (the first spec per (kind, unit), in registration order);
    kinds sorted, units in the order their specs were registered (the first is the default)."""
    found: dict[str, dict[str, str]] = {}
    for name, spec in STRATEGIES.items():
        if spec.sizing is not None:
            found.setdefault(spec.sizing.kind, {}).setdefault(UNIT_WORDS[sizing_unit(spec.sizes, spec.sizing)], name)
    return dict(sorted(found.items()))


def _either(words: list[str]) -> str:
    return " or ".join(words) if len(words) < 3 else f"{', '.join(words[:-1])} or {words[-1]}"


def _kind_keys(bases: dict[str, str]) -> tuple[list[str], list[str]]:
    """(every key an entry of the kind may hold: the sizes first, then unit, then the others; its size keys)."""
    keys = list(dict.fromkeys(k for base in bases.values() for k in STRATEGIES[base].sizing.keys))
    sized = [k for k in keys if any(STRATEGIES[b].sizing.keys.get(k) in STRATEGIES[b].sizes for b in bases.values())]
    return [*sized, "unit", *(k for k in keys if k not in sized)], sized


def _variant(entry: dict, where: str, problems: list[str]) -> str | None:
    """Register the sized variant of ``entry`` from the declarations of the registered specs
    (``StrategySpec.sizing`` and ``sizes``); its name, or ``None`` after a problem."""
    kinds = sized_kinds()
    kind = entry.get("kind")
    if kind not in list(kinds):
        problems.append(f"{where}: kind must be one of {', '.join(kinds)}, got {shown(kind)}")
        return None
    bases = kinds[kind]
    allowed, sized = _kind_keys(bases)
    unknown = sorted(map(str, set(entry) - {"kind", *allowed}))  # keys of mixed types (2023:, yes:)
    if unknown:
        problems.append(f"{where}: unknown key(s) {bounds.cut(', '.join(unknown))} for kind {kind} "
                        f"(allowed: {', '.join(allowed)})")
    offered = [w for w in UNIT_WORDS.values() if any(w in units for units in kinds.values())]
    unit = entry.get("unit", next(iter(bases)))
    if unit not in offered:
        problems.append(f"{where}: unit must be {_either(offered)}, got {shown(unit)}")
        return None
    sizes = {key: entry.get(key) for key in sized if key != "overlap"}
    missing = [key for key, value in sizes.items() if value is None]
    bad = [f"{key}={shown(value)}" for key, value in sizes.items()
           if value is not None and key != "floor" and not _positive_int(value)]
    floor = sizes.get("floor")
    if floor is not None and (not isinstance(floor, int) or isinstance(floor, bool) or floor < 0):
        problems.append(f"{where}: floor must be a non-negative integer (0 = no floor), got {shown(floor)}")
        return None
    if missing:
        problems.append(f"{where}: missing {', '.join(missing)}")
    if bad:
        problems.append(f"{where}: sizes must be positive integers, got {', '.join(bad)}")
    overlap = entry.get("overlap", 0)
    if not isinstance(overlap, int) or isinstance(overlap, bool) or overlap < 0:
        problems.append(f"{where}: overlap must be a non-negative integer, got {shown(overlap)}")
        return None
    percentile = entry.get("percentile", DEFAULT_PERCENTILE)
    if not _number(percentile) or not 0 < percentile < 100:
        problems.append(f"{where}: percentile (the breakpoint percentile of adjacent-sentence distances) must "
                        f"be a number between 0 and 100, got {shown(percentile)}")
        return None
    if missing or bad:
        return None
    ceiling = next((key for key in CEILING_KEYS if key in sizes), None)
    if "overlap" in allowed and ceiling and overlap >= sizes[ceiling]:
        problems.append(f"{where}: overlap ({overlap}) must be smaller than {ceiling} ({sizes[ceiling]})")
        return None
    if unit not in bases:
        problems.append(f"{where}: the {kind} cap is in {_either(list(bases))} (unit: {next(iter(bases))})")
        return None
    base = STRATEGIES[bases[unit]]
    values = {**sizes, "overlap": overlap, "percentile": percentile}
    for key in allowed:
        if key != "unit" and key not in base.sizing.keys and values.get(key, entry.get(key)) != KEY_DEFAULTS.get(key):
            units = [u for u, b in bases.items() if key in STRATEGIES[b].sizing.keys]
            problems.append(f"{where}: {key} for {kind} splitting is offered in {_either(units)} (unit: {units[0]})")
            return None
    if floor is not None and ceiling and floor >= sizes[ceiling]:
        problems.append(f"{where}: floor ({floor}) must be below {ceiling} ({sizes[ceiling]})")
        return None
    params = {param: float(values[key]) if key == "percentile" else values[key]
              for key, param in base.sizing.keys.items()
              if param in base.params or values[key] != KEY_DEFAULTS.get(key)}
    default = percentile == DEFAULT_PERCENTILE
    fields = {**values, "_o": f"_o{overlap}" if overlap else "", "o_label": f" / overlap {overlap}" if overlap else "",
              "_p": "" if default else f"_p{percentile:g}",
              "p_label": "" if default else f", breakpoints above the {percentile:g}th percentile"}
    name, label = base.sizing.name.format(**fields), base.sizing.label.format(**fields)
    spec_unit = base.sizes[base.sizing.keys[ceiling]] if ceiling else None
    extra = {f"max_{spec_unit}": sizes[ceiling]} if spec_unit in ("chars", "tokens") else {}
    if name in STRATEGIES and STRATEGIES[name].func is base.func \
            and all(STRATEGIES[name].params.get(k) == v for k, v in params.items()):
        return name  # e.g. fixed_tokens_512, already registered
    try:
        return register_variant(name, base.name, params, label, **extra)
    except ValueError as exc:
        problems.append(f"{where}: {exc}")
        return None


def _strategies(value: Any, problems: list[str], name: str) -> list[str]:
    if not isinstance(value, list) or not value:
        problems.append(f"{name}: strategies must be a non-empty list")
        return []
    names = []
    for number, entry in enumerate(value, start=1):
        where = f"{name}: strategies item {number}"
        if isinstance(entry, str):
            if entry not in STRATEGIES:
                problems.append(f"{where}: unknown strategy {shown(entry)}; known: {', '.join(STRATEGIES)}")
            else:
                names.append(entry)
        elif isinstance(entry, dict):
            variant = _variant(entry, where, problems)
            if variant is not None:
                names.append(variant)
        else:
            problems.append(f"{where}: expected a strategy name or a mapping with kind and sizes")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(f"{name}: strategies listed twice: {', '.join(duplicates)}")
    return list(dict.fromkeys(names))


def _models(value: Any, problems: list[str], name: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
        problems.append(f"{name}: models must be a non-empty list of model names or folders")
        return []
    for model in value:
        if model.lower() in {a.lower() for a in MODEL_ALIASES}:
            continue
        folder = Path(model).expanduser()
        if not folder.is_dir() or not ((folder / "config.json").is_file() or (folder / "modules.json").is_file()):
            problems.append(f"{name}: model {shown(model)} is neither a shipped model ({', '.join(MODEL_ALIASES)}) "
                            "nor a local sentence-transformers folder (with config.json)")
            continue
        if shipped_label(folder):  # the shipped MiniLM's folder, or the assembled mpnet: known good
            continue
        problem = model_folder_problem(folder)  # imports transformers (and with it torch)
        if problem:
            problems.append(f"{name}: model {shown(model)}: {problem}")
    return value


WEIGHT_FILES = ("*.safetensors", "pytorch_model.bin", "onnx/*.onnx", "*.onnx")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model",
                   "tokenizer.model")


def model_folder_problem(folder: Path) -> str | None:
    """Why ``folder`` is not a loadable sentence-transformers (transformers) model, or None.

    Checks, without loading it: ``config.json`` is a JSON object whose ``model_type`` is one that
    transformers knows, a weights file and a tokenizer file are present.
    """
    import json

    config = folder / "config.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{config} is missing (every transformers model has one)"
    except (OSError, ValueError) as exc:
        return f"{config} is not readable JSON ({exc})"
    if not isinstance(data, dict) or not isinstance(data.get("model_type"), str):
        return f"{config} names no model_type; this folder is not a transformers model"
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    if data["model_type"] not in CONFIG_MAPPING_NAMES:
        return (f"{config} names model_type {shown(data['model_type'])}, which the installed transformers does "
                "not know; this folder is not a model it can load")
    if not any(next(folder.glob(pattern), None) for pattern in WEIGHT_FILES):
        return f"no weights in {folder} (model.safetensors, pytorch_model.bin or an .onnx file)"
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        return f"no tokenizer in {folder} ({', '.join(TOKENIZER_FILES[:3])} ...)"
    return None


def parse_config(data: Any, name: str = "config") -> OwnConfig:
    """An ``OwnConfig`` from parsed YAML; ``ValidationError`` listing every problem."""
    from chunklab_core.retrieval.registry import registered

    config, problems = OwnConfig(), []
    if data is None:
        return config
    if not isinstance(data, dict):
        raise ValidationError([f"{name}: expected a mapping of settings (see chunklab_core/own/config.py)"])
    known = set(OwnConfig.__dataclass_fields__)
    unknown = sorted(map(str, set(data) - known))  # keys of mixed types (2023:, yes:) sort as text
    if unknown:
        problems.append(f"{name}: unknown key(s) {bounds.cut(', '.join(unknown))} (allowed: {', '.join(sorted(known))})")
    if "strategies" in data:
        config.strategies = _strategies(data["strategies"], problems, name)
    if "retrievers" in data:
        value = data["retrievers"]
        if not isinstance(value, list) or not value or any(r not in registered() for r in value):
            problems.append(f"{name}: retrievers must be a non-empty list of {', '.join(registered())}, got {shown(value)}")
        else:
            config.retrievers = list(dict.fromkeys(value))
    if "models" in data:
        config.models = _models(data["models"], problems, name)
    if "backend" in data:
        if data["backend"] not in ("auto", "torch", "onnx"):
            problems.append(f"{name}: backend must be auto, torch or onnx, got {shown(data['backend'])}")
        else:
            config.backend = data["backend"]
    if "quantize" in data:
        if data["quantize"] not in (None, "int8"):
            problems.append(f"{name}: quantize must be int8 (or absent: no quantisation), got {shown(data['quantize'])}")
        elif data["quantize"] == "int8" and config.backend == "torch":
            problems.append(f"{name}: quantize: int8 quantises the ONNX path; it needs backend auto or onnx, not torch")
        else:
            config.quantize = data["quantize"]
    for key in ("k", "resamples", "seed"):  # bounded, never clamped (core.bounds.RANGES)
        if key in data:
            problem = bounds.problem(key, data[key], low=100 if key == "resamples" else None)
            if problem:
                problems.append(f"{name}: {problem}")
            else:
                setattr(config, key, data[key])
    if "budgets" in data:
        value = data["budgets"]
        bad = [b for b in value if bounds.problem("budget", b)] if isinstance(value, list) else [value]
        if not isinstance(value, list) or not value or bad:
            low, high = bounds.RANGES["budget"]
            problems.append(f"{name}: budgets must be a non-empty list of positive integers (tokens, {low:,} to "
                            f"{high:,}), got {shown(bad[0] if bad else value)}")
        else:
            config.budgets = sorted(set(value))
    for key in ("recall_target", "threshold"):
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
                problems.append(f"{name}: {key} must be a number in (0, 1], got {shown(value)}")
            else:
                setattr(config, key, float(value))
    if not any(needs_model(r) for r in config.retrievers) and "models" in data:
        problems.append(f"{name}: models are set but no dense or hybrid retriever uses them")
    if problems:
        raise ValidationError(problems, f" in {name}")
    return config


def memory_needed(config: OwnConfig, n_questions: int) -> tuple[float, str]:
    """``(bytes, how)``: a lower estimate of the memory a run of ``config`` on ``n_questions`` needs:
    questions x k x cells x :data:`BYTES_PER_RANK` (every cell's ranked, judged top k is kept)
    plus questions x resamples x :data:`BYTES_PER_DRAW` (the paired draws)."""
    models = max(1, len(config.models))
    per_strategy = sum(models if needs_model(r) else 1 for r in config.retrievers)
    cells = len(config.strategies) * per_strategy
    depth = max(config.ks)
    ranks = float(n_questions) * depth * cells * BYTES_PER_RANK
    draws = float(n_questions) * config.resamples * BYTES_PER_DRAW
    how = (f"{n_questions:,} questions x k {depth:,} x {cells:,} cells x {BYTES_PER_RANK} bytes"
           f" + {n_questions:,} questions x {config.resamples:,} resamples x {BYTES_PER_DRAW} bytes")
    return ranks + draws, how


def load_config(path: str | Path | None) -> OwnConfig:
    """The config of ``path`` (``None`` or ``""``: the defaults); ``ValidationError`` on any problem."""
    if not path:
        return OwnConfig()
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValidationError([f"{path}: cannot be read ({exc.strerror})"]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError([f"{path}: not a text file (byte 0x{raw[exc.start]:02x} at offset {exc.start} is not "
                               "UTF-8); the config is a YAML text file (see examples/own_config.yaml)"]) from None
    try:
        data, duplicates = parse_yaml(text, CONFIG_MAX_VALUES)
    except yaml.YAMLError as exc:
        raise ValidationError([f"{path.name}: invalid YAML ({' '.join(str(exc).split())})"]) from None
    if duplicates:
        raise ValidationError([f"{path.name}: {d}" for d in duplicates])
    return parse_config(data, path.name)


def strategy_table() -> list[tuple[str, str]]:
    """(name, label) of every registered strategy, for ``python -m chunklab_core.own.cli strategies``."""
    return [(name, strategy_label(name)) for name in STRATEGIES]
