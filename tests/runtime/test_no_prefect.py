"""`tasks/` never imports Prefect: the library runs without it, and a Prefect upgrade cannot
change how work runs or stops (Ctrl-C, kills) except through `flows/` and `cli/`."""
import ast
import os

from conftest import REPO


def prefect_imports(path: str) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    found = []
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        found += [f"{os.path.relpath(path, REPO)}:{node.lineno}: {n}" for n in names
                  if n == "prefect" or n.startswith(("prefect.", "prefect_"))]
    return found


def test_no_module_under_tasks_imports_prefect():
    modules = [os.path.join(d, n) for d, _, names in os.walk(os.path.join(REPO, "tasks")) for n in names
               if n.endswith(".py")]
    assert len(modules) > 50   # the walk found the library
    assert [hit for path in modules for hit in prefect_imports(path)] == []
