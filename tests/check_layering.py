"""The source tree's layering, checked by reading it: the core never includes a plugin's headers
(plugins/shared is for plugins; the core reaches kernels only through the C ABI), the core's
CMake never puts plugins/ on its include path, and the Python package has no import cycle among
its modules (imports at module level, where a cycle breaks `import kael`)."""
import ast
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def core_includes():
    problems = []
    pattern = re.compile(r'#\s*include\s*[<"]([^>"]+)[>"]')
    for path in sorted((ROOT / "core").rglob("*")):
        if path.suffix not in {".h", ".hpp", ".cpp", ".cc", ".inc"}:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = pattern.search(line)
            if match and (match.group(1).startswith("kael/kernels/") or "plugins/" in match.group(1)):
                problems.append(f"{path.relative_to(ROOT)}:{number}: includes {match.group(1)}")
    for path in (ROOT / "core").rglob("CMakeLists.txt"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "plugins/" in line and not line.lstrip().startswith("#"):
                problems.append(f"{path.relative_to(ROOT)}:{number}: names plugins/: {line.strip()}")
    return problems


def module_name(path, package_root):
    parts = list(path.relative_to(package_root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_level_imports(path, name, is_package):
    """kael modules that path imports when it runs (not inside functions)."""
    tree = ast.parse(path.read_text())
    package = name if is_package else name.rpartition(".")[0]
    found = set()
    for node in tree.body:
        for child in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                            ast.ClassDef)) else []:
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names if alias.name.startswith("kael"))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.startswith("kael"):
                    found.add(target)
                    found.update(f"{target}.{alias.name}" for alias in child.names)
    return found


def import_cycles():
    package_root = ROOT / "python" / "kael"
    modules = {}
    for path in package_root.rglob("*.py"):
        name = module_name(path, package_root)
        modules[name] = (path, path.name == "__init__.py")
    graph = {}
    for name, (path, is_package) in modules.items():
        if is_package:  # a package's __init__ importing its children is how packages work
            continue
        graph[name] = {m for m in module_level_imports(path, name, is_package)
                       if m in modules and not modules[m][1] and m != name}
    cycles = []
    state = {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(" -> ".join(stack[stack.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return [f"import cycle: {cycle}" for cycle in cycles]


def main():
    problems = core_includes() + import_cycles()
    for problem in problems:
        print(problem)
    print(f"layering: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
