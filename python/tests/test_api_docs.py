"""The documented Python API: every public function, class, method and property has a
docstring, every callable a signature inspect can read, module-level names an example; internals
stay out of the top-level namespace; the type stubs let mypy check a user's program."""
import importlib
import inspect
import os
import subprocess
import sys
import textwrap

import pytest

import kael

PUBLIC_MODULES = ["kael", "kael.nn", "kael.nn.functional", "kael.nn.init", "kael.nn.utils",
                  "kael.optim", "kael.optim.lr_scheduler", "kael.utils.data",
                  "kael.utils.data.dataloader", "kael.utils.data.sampler",
                  "kael.utils.data.dataset", "kael.autograd",
                  "kael.safetensors", "kael.linalg", "kael.amp", "kael.backends",
                  "kael.backends.cuda", "kael.backends.cudnn", "kael.cuda", "kael.cuda.amp", "kael.distributions",
                  "kael.utils.checkpoint", "kael.distributed",
                  "kael.utils.data.distributed", "kael.nn.parallel"]
INTERNALS = ["relu_backward", "sigmoid_backward", "gelu_backward", "format_tensor", "Record",
             "values_indices", "sum_to"]
# Methods every class has from Python or pybind11 itself, not written by kael.
INHERITED = {"__init__", "__call__"}


def public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name in vars(module) if not name.startswith("_")]
    for name in names:
        value = getattr(module, name)
        if inspect.ismodule(value):
            continue
        if not (inspect.isclass(value) or callable(value)):
            continue  # dtypes and constants
        if not getattr(value, "__module__", "kael").startswith("kael"):
            continue  # imported helpers (typing, math)
        yield name, value


def kael_members(cls):
    """(name, value) of the public members kael defines on cls and its kael bases."""
    seen = set()
    for owner in cls.__mro__:
        if not owner.__module__.startswith("kael"):
            continue
        for name, value in vars(owner).items():
            if name in seen or (name.startswith("_") and name not in INHERITED):
                continue
            seen.add(name)
            yield name, getattr(cls, name, value), value


def api():
    for module_name in PUBLIC_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            continue  # test_public_modules_import reports it
        for name, value in public_names(module):
            yield f"{module_name}.{name}", value, True
            if inspect.isclass(value):
                for member, bound, raw in kael_members(value):
                    if member == "__init__" and raw is object.__init__:
                        continue
                    yield f"{module_name}.{name}.{member}", raw, False


def documented_api():
    return sorted({qualified: (value, top) for qualified, value, top in api()}.items())


def test_public_modules_import():
    for name in PUBLIC_MODULES:
        importlib.import_module(name)


def test_every_public_name_has_a_docstring():
    missing = [name for name, (value, _) in documented_api()
               if len((inspect.getdoc(value) or "").strip()) < 10]
    assert not missing, f"{len(missing)} public names without a docstring: {missing}"


def test_every_callable_has_a_signature():
    unreadable = []
    for name, (value, _) in documented_api():
        if isinstance(value, (property, type)) or not callable(value):
            continue
        target = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        try:
            inspect.signature(target)
        except (TypeError, ValueError) as error:
            unreadable.append(f"{name} ({error})")
    assert not unreadable, f"{len(unreadable)} callables without a signature: {unreadable}"


def test_module_level_names_show_an_example():
    without = [name for name, (value, top) in documented_api()
               if top and "xample" not in (inspect.getdoc(value) or "")]
    assert not without, f"{len(without)} module-level names without an example: {without}"


def test_signatures_name_the_arguments():
    assert list(inspect.signature(kael.sum).parameters)[:3] == ["input", "dim", "keepdim"]
    assert "keepdim" in inspect.signature(kael.Tensor.sum).parameters
    assert inspect.signature(kael.nn.functional.cross_entropy).parameters[
        "ignore_index"].default == -100


def test_internals_are_not_top_level():
    leaked = [name for name in INTERNALS if hasattr(kael, name)]
    assert not leaked, f"internal names in the kael namespace: {leaked}"


def test_stubs_and_py_typed_ship_with_the_package():
    folder = os.path.dirname(kael.__file__)
    assert os.path.isfile(os.path.join(folder, "py.typed"))
    stub = os.path.join(folder, "_kael.pyi")
    with open(stub, encoding="utf-8") as file:
        text = file.read()
    compile(text, stub, "exec")
    assert "class Tensor" in text and "def matmul(" in text


def test_mypy_checks_a_users_program(tmp_path):
    pytest.importorskip("mypy", reason="python3-mypy (scripts/install_deps.sh installs it)")
    program = tmp_path / "user.py"
    program.write_text(textwrap.dedent("""\
        import kael
        x = kael.ones(3, 4)
        total = (x @ x.T).sum(dim=1)
        reveal_type(total)
        wrong: str = kael.relu(x)
        """))
    folder = os.path.dirname(os.path.dirname(kael.__file__))
    # An installed kael (a wheel in site-packages) is found by mypy itself, which refuses a
    # site-packages folder in MYPYPATH; a build tree's is not.
    installed = os.path.basename(folder) in ("site-packages", "dist-packages")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), str(program)],
        capture_output=True, text=True, cwd=tmp_path,
        env=os.environ if installed else {**os.environ, "MYPYPATH": folder})
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert any('Revealed type is "kael._kael.Tensor"' in line for line in lines), result.stdout
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 1 and "user.py:5:" in errors[0] and '"Tensor"' in errors[0], \
        result.stdout


def test_docstring_examples_run():
    here = os.path.dirname(os.path.abspath(__file__))
    result = subprocess.run([sys.executable, os.path.join(here, "doc_examples.py")],
                            capture_output=True, text=True, cwd=here, timeout=600,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                [here, os.environ.get("PYTHONPATH", "")])})
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_documented_parameter_names_are_the_bindings():
    here = os.path.dirname(os.path.abspath(__file__))
    result = subprocess.run([sys.executable, os.path.join(here, "doc_signatures.py")],
                            capture_output=True, text=True, cwd=here, timeout=300,
                            env={**os.environ, "KAEL_PYBIND_SIGNATURES": "1",
                                 "PYTHONPATH": os.pathsep.join(
                                     [here, os.environ.get("PYTHONPATH", "")])})
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
