"""Imports inside spacy_hcparse run one way: shared names (``names``), decoders and transition/ at
the bottom, then segmentation, the graph parser's graph/, layers, learning, models, components, and
the command line on top; no module imports itself back.

Every import of every module counts, those inside functions too (read from the source with
``ast``, so nothing is imported to check)."""
import ast
from pathlib import Path
from typing import Dict, Set

import spacy_hcparse

PACKAGE = Path(spacy_hcparse.__file__).parent
# level of each top-level package or module; a module may import its own package or a lower level
LEVELS = {
    "__init__": 0,  # the package root: __version__
    "names": 0,  # Span, ROOT_LABEL
    "decoders": 1,
    "transition": 1,
    "segment": 1,
    "blas": 1,  # which BLAS a model multiplies with on a CPU (thinc only)
    "compiling": 0,  # the kernels' njit and compile notice (numba only)
    "graph": 2,
    "conllu": 2,
    "loggers": 2,
    "callbacks": 2,
    "readers": 2,
    "layers": 2,
    "learning": 3,
    "calibration": 3,
    "models": 4,
    "evaluation": 4,
    "components": 5,
    "tokenizer": 5,  # the UD tokenizer: reads treebanks (evaluation) to train
    "corpus": 5,
    "distributed": 6,
    "warmup": 6,  # compiling a pipeline's kernels ahead (`python -m spacy_hcparse warmup`)
    "cli": 7,
    "__main__": 8,
}
PURE = ("decoders", "transition")  # numpy + numba only
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
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


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


def test_decoders_and_transition_use_no_framework():
    wrong = []
    for pure in PURE:
        for path in (PACKAGE / pure).rglob("*.py"):
            for target in imports(path):
                if target.split(".")[0] in FRAMEWORKS:
                    wrong.append(f"{module_name(path)} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))
