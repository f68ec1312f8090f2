"""Imports inside spacy_hcparse run one way: shared names (``names``), decoders and the transition
system's kernels at the bottom, then segmentation, layers, learning, models and the shared component
code; each parser's package (``graph/``, ``transition/``) climbs through the same floors inside
itself (structures, loss and gold, model, component); the corpus and the command line on top;
no module imports itself back.

Every import of every module counts, those inside functions too (read from the source with
``ast``, so nothing is imported to check)."""
import ast
from pathlib import Path
from typing import Dict, Set

import spacy_hcparse

PACKAGE = Path(spacy_hcparse.__file__).parent
# floor of each top-level package or module; a module may import its own part or a lower floor
LEVELS = {
    "__init__": 0,  # the package root: __version__
    "names": 0,  # Span, ROOT_LABEL
    "compiling": 0,  # the kernels' njit and compile notice (numba only)
    "decoders": 1,
    "transition.system": 1,
    "segment": 1,
    "blas": 1,  # which BLAS a model multiplies with on a CPU (thinc only)
    "transition.tagger": 2,
    "conllu": 2,
    "loggers": 2,
    "callbacks": 2,
    "readers": 2,
    "layers": 2,
    "learning": 3,
    "graph.structures": 3,
    "graph.learning": 4,
    "transition.learning": 4,
    "models": 4,
    "evaluation": 4,
    "graph.model": 5,
    "transition.model": 5,
    "components": 6,
    "graph.component": 7,
    "transition.component": 7,
    "tokenizer": 7,  # the UD tokenizer: reads treebanks (evaluation) to train
    "corpus": 7,
    "distributed": 8,
    "warmup": 8,  # compiling a pipeline's kernels ahead (`python -m spacy_hcparse warmup`)
    "cli": 9,
    "__main__": 10,
}
# the parts of each parser's package, by module
PARSERS = {
    "graph": {
        "structures": ("__init__", "scores", "pruning", "decoding", "reparse", "labeling", "valency", "parses",
                       "calibration"),
        "learning": ("graph_loss", "batch_loss", "batch_hinge", "graph_gold", "rehearsal"),
        "model": ("graph_model", "graph_parts", "torch_context"),
        "component": ("graph_parser", "graph_factory", "graph_batch", "extensions", "ahead"),
    },
    "transition": {
        "system": ("__init__", "state", "moves", "templates", "hashed_scoring", "oracle", "dynamic_oracle", "search",
                   "guided", "tagging"),
        "tagger": ("perceptron_tagger",),
        "learning": ("perceptron", "tagger_trainer", "move_loss", "projective_gold"),
        "model": ("transition_types", "neural_model", "perceptron_model", "neural_learner", "perceptron_learner",
                  "transition_model"),
        "component": ("transition_parser",),
    },
}
PURE = ("decoders", "transition.system")  # numpy + numba only
FRAMEWORKS = ("spacy", "thinc")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> Set[str]:
    """Absolute names of the modules ``path`` imports (``from x import y`` gives ``x`` and ``x.y``;
    names that are not modules are dropped later)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{alias.name}" for alias in node.names)
    return out


def graph() -> Dict[str, Set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports(path) if m in modules and m != name} for name, path in modules.items()}


def part(name: str) -> str:
    """The part of ``LEVELS`` that module ``name`` belongs to."""
    parts = name.split(".") + ["__init__"]
    if parts[1] in PARSERS:
        return next(f"{parts[1]}.{group}" for group, modules in PARSERS[parts[1]].items() if parts[2] in modules)
    return parts[1] if len(parts) > 2 else "__init__"


def test_every_module_has_a_level():
    assert {part(name) for name in graph()} <= set(LEVELS)


def test_imports_run_one_way():
    wrong = []
    for name, targets in graph().items():
        for target in targets:
            if part(target) != part(name) and LEVELS[part(target)] >= LEVELS[part(name)]:
                if not (part(target) == "__init__" and target == "spacy_hcparse"):
                    wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_no_import_cycles():
    edges = graph()
    state: Dict[str, int] = {}  # 1 on the path, 2 done

    def visit(name, path):
        state[name] = 1
        for target in sorted(edges[name]):
            if state.get(target) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(target):] + [target]))
            if target not in state:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])


def test_decoders_and_transition_system_use_no_framework():
    wrong = []
    for path in PACKAGE.rglob("*.py"):
        if part(module_name(path)) in PURE:
            for target in imports(path):
                if target.split(".")[0] in FRAMEWORKS:
                    wrong.append(f"{module_name(path)} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def test_shared_ground_imports_no_parser_package():
    """Code both parsers stand on (everything outside ``graph/`` and ``transition/``, below the
    corpus and the command line) reaches neither parser's package."""
    wrong = []
    for name, targets in graph().items():
        if part(name).split(".")[0] not in PARSERS and LEVELS[part(name)] < LEVELS["graph.component"]:
            wrong += [f"{name} imports {t}" for t in targets if part(t).split(".")[0] in PARSERS]
    assert not wrong, "\n".join(sorted(wrong))


def test_every_parser_module_has_a_part():
    for parser, groups in PARSERS.items():
        listed = [module for modules in groups.values() for module in modules]
        assert sorted(listed) == sorted({p.stem for p in (PACKAGE / parser).glob("*.py")})


def test_no_two_modules_share_a_name():
    names = [p.name for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []
