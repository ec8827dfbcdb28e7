"""The compiled modules' typed surface: a stub (``tasks/native/*.pyi``) for each, naming what
the built module has, so the stubs cannot drift from the code."""
import ast
import importlib
import inspect
import types
from pathlib import Path

import pytest

from conftest import REPO

NATIVE = Path(REPO) / "tasks" / "native"
MODULES = sorted(p.stem for p in NATIVE.glob("*.pyx"))


def stub_surface(name: str) -> dict[str, object]:
    """The stub's public names: a function's parameters' names, a class's public members."""
    out: dict[str, object] = {}
    for node in ast.parse((NATIVE / f"{name}.pyi").read_text()).body:
        if isinstance(node, ast.FunctionDef):
            a = node.args
            out[node.name] = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
        elif isinstance(node, ast.ClassDef):
            out[node.name] = sorted(m.name for m in node.body
                                    if isinstance(m, ast.FunctionDef) and not m.name.startswith("_"))
        elif isinstance(node, ast.AnnAssign):
            out[node.target.id] = None
    return {k: v for k, v in out.items() if not k.startswith("_")}


def module_surface(module) -> dict[str, object]:
    """The same of a built module (but the modules it imports)."""
    out: dict[str, object] = {}
    for k, v in vars(module).items():
        if k.startswith("_") or isinstance(v, types.ModuleType):
            continue
        if isinstance(v, type):
            out[k] = sorted(m for m in vars(v) if not m.startswith("_"))
        elif callable(v) and getattr(v, "__module__", None) == module.__name__:
            out[k] = list(inspect.signature(v).parameters)
        else:   # a value, a callable set from outside among them (LANG_FACTORY)
            out[k] = None
    return out


def test_each_compiled_module_has_a_stub_and_each_stub_a_module():
    assert MODULES and sorted(p.stem for p in NATIVE.glob("*.pyi")) == MODULES
    assert (Path(REPO) / "py.typed").is_file()   # PEP 561: at the top package, for every module below


@pytest.mark.parametrize("name", MODULES)
def test_a_stub_names_what_the_built_module_has(name):
    try:
        module = importlib.import_module(f"warclake.tasks.native.{name}")
    except ImportError as exc:
        pytest.skip(f"{name} is not built ({exc})")
    assert stub_surface(name) == module_surface(module)
