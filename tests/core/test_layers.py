"""adr_core's layers run one way (issue 31): each module imports only its own layer or those below it.

    0  base (config fields, seeding, checkpoint I/O), yaml_files, cli_types
    1  randomization, rollout
    2  envs, agents, samplers, discriminator
    3  iteration, plausibility, run_dir (the files of a run directory)
    4  evaluation (playing policies)
    5  everything else: report (tables and figures over runs), engine (the loop, its steps and hooks), training
       (config, trainer, CLI), probe, run_dir, adr_loop, export, integrations, ...

Read from the source (no import), so a lazy import inside a function counts too.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "src" / "adr_core" / "adr_core"
LAYERS = {"base": 0, "yaml_files": 0, "cli_types": 0, "randomization": 1, "rollout": 1, "envs": 2, "agents": 2,
          "samplers": 2, "discriminator": 2, "iteration": 3, "plausibility": 3, "run_dir": 3, "evaluation": 4}
TOP = 5
# known exceptions, each with its reason
ALLOWED = {
    ("adr_core.evaluation.episodes", "adr_core.probe.policies"): "a probe's module:callable policy, imported lazily",
}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                found.add(".".join(base + ([node.module] if node.module else [])))
            elif node.module:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == "adr_core"}


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.get(parts[1], TOP) if len(parts) > 1 else TOP


def test_every_import_goes_to_the_same_layer_or_below() -> None:
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        module = _module(path)
        for target in sorted(_imports(path)):
            if _layer(target) > _layer(module) and (module, target) not in ALLOWED:
                upward.append(f"{module} (layer {_layer(module)}) imports {target} (layer {_layer(target)})")
    assert not upward, "\n".join(upward)


def test_the_scan_sees_imports() -> None:
    """The check cannot pass by reading nothing: known edges are found."""
    assert "adr_core.base.fields" in _imports(ROOT / "discriminator.py")
    assert "adr_core.evaluation.episodes" in _imports(ROOT / "report" / "evaluations.py")
    assert _layer("adr_core.report.build") > _layer("adr_core.evaluation.sweeps") > _layer("adr_core.iteration")
