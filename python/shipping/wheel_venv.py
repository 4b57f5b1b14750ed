"""Building the wheels and installing them into a fresh venv for check_wheels.py, with pip where
the Python has it and, on a machine whose Python lacks pip (--gpu), the PEP 517 hook called
directly and the wheels unpacked into site-packages."""
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

timings = []


def run(command, *, env=None, cwd=None, what=None, check=True):
    start = time.monotonic()
    shown = " ".join(str(part) if "\n" not in str(part) else "<script>" for part in command)
    print("+", shown, flush=True)
    result = subprocess.run([str(part) for part in command], env=env, cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if what:
        timings.append((what, time.monotonic() - start))
    if check and result.returncode != 0:
        print(result.stdout[-20000:])
        sys.exit(f"FAILED ({result.returncode}): {what or shown}")
    return result.stdout if check else result


def works(python, code):
    return subprocess.run([str(python), "-c", code], capture_output=True).returncode == 0


def has_pip(python):
    return works(python, "import pip")


# The hook as a frontend calls it: in the project folder, with its backend-path first.
HOOK = """
import sys, tomllib, importlib
system = tomllib.load(open("pyproject.toml", "rb"))["build-system"]
sys.path[:0] = system.get("backend-path", [])
print(importlib.import_module(system["build-backend"]).build_wheel(sys.argv[1]))
"""


def build_wheel(python, project, dist):
    before = set(dist.iterdir())
    if has_pip(python):
        run([python, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
             project, "-w", dist], what=f"pip wheel {project.name}")
    else:
        run([python, "-c", HOOK, dist.resolve()], cwd=project, what=f"build_wheel {project.name}")
    made = [path for path in set(dist.iterdir()) - before if path.suffix == ".whl"]
    if len(made) != 1:
        sys.exit(f"FAILED: building {project} made {made}")
    return made[0]


def make_venv(python, venv):
    """A venv with the system site-packages; where the Python is itself a venv's, whose packages
    (torch, numpy, pytest) a venv of it does not see, a .pth file adds them."""
    made = run([python, "-m", "venv", "--system-site-packages", venv], what="venv", check=False)
    if made.returncode != 0:  # no ensurepip: a venv without pip
        run([python, "-m", "venv", "--system-site-packages", "--without-pip", venv], what="venv")
    venv_python = venv / "bin" / "python"
    paths = "import json, sysconfig; print(json.dumps(sysconfig.get_paths()))"
    site_packages = Path(json.loads(run([venv_python, "-c", paths]))["purelib"]).resolve()
    wanted = [name for name in ("numpy", "pytest", "torch") if works(python, f"import {name}")]
    unseen = [name for name in wanted if not works(venv_python, f"import {name}")]
    if unseen:
        builder = json.loads(run([python, "-c", paths]))
        folders = sorted({builder["purelib"], builder["platlib"]})
        (site_packages / "_kael_check_base_venv.pth").write_text("\n".join(folders) + "\n")
        print(f"note: {unseen} are not seen from the venv; {site_packages}/"
              f"_kael_check_base_venv.pth adds {folders}")
    return venv_python, site_packages


def install(python, venv_python, site_packages, wheels):
    if has_pip(venv_python):
        run([venv_python, "-m", "pip", "install", "--no-index", *wheels], what="pip install")
    elif has_pip(python):
        run([python, "-m", "pip", "--python", venv_python, "install", "--no-index", *wheels],
            what="pip install")
    else:  # what pip would do for these wheels: everything belongs in site-packages
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(site_packages)
        print(f"note: no pip anywhere: the wheels were unpacked into {site_packages}")
        return False
    return True
