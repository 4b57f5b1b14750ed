"""kael's PEP 517 build backend (pyproject.toml's backend-path), for two projects:

- python/ ("kael"): libkael_core, libkael_nn, the cpu plugin, the module kael._kael and the pure-Python
  package, all inside the wheel's kael/ folder (tag cp3XX-cp3XX-linux_<arch>);
- python/cuda/ ("kael-cuda"): only the cuda plugin, in kael_cuda/ (tag py3-none-linux_<arch>).

Both drive a dedicated CMake configure of the top-level project with what the machine has,
downloading nothing: through scikit-build-core where it is importable, else by running CMake here
(`cmake --install --component ... --strip` into a staging folder) and packing that folder with
setuptools' bdist_wheel. KAEL_WHEEL_BACKEND=setuptools|scikit-build-core forces one.

Environment: KAEL_WHEEL_BUILD_DIR / KAEL_CUDA_WHEEL_BUILD_DIR (the CMake build folder, reused
between builds; default <repo>/build-wheel and <repo>/build-wheel-cuda, at the depth of <repo>/build
so that ccache with CCACHE_BASEDIR finds what that build compiled), CMAKE_ARGS (more -D options),
and what CMake itself reads: CMAKE_<LANG>_COMPILER_LAUNCHER, CMAKE_BUILD_PARALLEL_LEVEL.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# One configure per wheel. Paths are relative to the wheel's root (site-packages): the core looks
# for its plugins in <its folder>/kael/plugins and for GPT-2's vocabulary in ../share/kael/gpt2,
# the module for libkael_core in lib/ (python/CMakeLists.txt computes that RPATH).
_COMMON_DEFINES = {"KAEL_WHEEL": "ON", "KAEL_BUILD_TESTS": "OFF", "KAEL_BUILD_APPS": "OFF"}
PROJECTS = {
    "kael": {
        "build_dir_variable": "KAEL_WHEEL_BUILD_DIR",
        "default_build_dir": ROOT / "build-wheel",
        "defines": {"KAEL_BUILD_PYTHON": "ON", "KAEL_BUILD_CUDA": "OFF",
                    "CMAKE_INSTALL_LIBDIR": "kael/lib", "CMAKE_INSTALL_DATADIR": "kael/share",
                    "KAEL_PYTHON_INSTALL_DIR": "kael"},
        "targets": ["kael_core", "kael_nn", "kael_plugin_cpu", "_kael"],
        "components": ["library", "nn_library", "core", "cpu", "python"],  # core: GPT-2's vocabulary
        "packages": [],  # CMake installs the pure-Python files with the module
        "pure_python_tag": False,
    },
    "kael-cuda": {
        "build_dir_variable": "KAEL_CUDA_WHEEL_BUILD_DIR",
        "default_build_dir": ROOT / "build-wheel-cuda",
        "defines": {"KAEL_BUILD_PYTHON": "OFF", "KAEL_BUILD_CUDA": "ON",
                    "CMAKE_INSTALL_LIBDIR": "kael_cuda/lib"},
        "targets": ["kael_plugin_cuda"],
        "components": ["cuda"],
        "packages": ["kael_cuda"],  # plugin_folder(), beside the project's pyproject.toml
        "pure_python_tag": True,  # no Python ABI: the plugin is a plain shared library
    },
}


class BuildError(RuntimeError):
    pass


def _read_toml(path):
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    with open(path, "rb") as handle:
        return tomllib.load(handle)


def _cmake_project_version():
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    found = re.search(r"project\(kael\s+VERSION\s+([0-9.]+)", text)
    if not found:
        raise BuildError(f"no `project(kael VERSION x.y.z)` in {ROOT / 'CMakeLists.txt'}")
    return found.group(1)


def _project():
    """[project] of the pyproject.toml being built (the current folder) and its settings."""
    metadata = _read_toml("pyproject.toml")["project"]
    name = metadata["name"]
    if name not in PROJECTS:
        raise BuildError(f"kael_wheel builds {sorted(PROJECTS)}, not {name!r}")
    version = _cmake_project_version()
    if metadata["version"] != version:
        raise BuildError(f"{Path('pyproject.toml').resolve()} says version {metadata['version']}, "
                         f"CMakeLists.txt {version}: make them equal")
    for requirement in metadata.get("dependencies", []):
        pinned = re.fullmatch(r"kael\s*==\s*([^\s;]+)", requirement)
        if pinned and pinned.group(1) != version:
            raise BuildError(f"{name} requires {requirement!r} but this is kael {version}")
    return metadata, PROJECTS[name]


def _build_dir(settings):
    return Path(os.environ.get(settings["build_dir_variable"]) or settings["default_build_dir"])


def _defines(settings):
    defines = {"CMAKE_BUILD_TYPE": "Release", **_COMMON_DEFINES, **settings["defines"]}
    for language in ("C", "CXX", "CUDA"):  # CMake reads these only when it makes a new cache
        launcher = os.environ.get(f"CMAKE_{language}_COMPILER_LAUNCHER")
        if launcher:
            defines[f"CMAKE_{language}_COMPILER_LAUNCHER"] = launcher
    if settings["defines"].get("KAEL_BUILD_PYTHON") == "ON":
        try:
            import pybind11  # the pip package knows its CMake files; Debian's are found anyway
            defines["pybind11_DIR"] = pybind11.get_cmake_dir()
        except ImportError:
            pass
    return defines


def _use_scikit_build_core():
    chosen = os.environ.get("KAEL_WHEEL_BACKEND", "")
    if chosen not in ("", "setuptools", "scikit-build-core"):
        raise BuildError(f"KAEL_WHEEL_BACKEND={chosen}: say setuptools or scikit-build-core")
    if chosen:
        return chosen == "scikit-build-core"
    try:
        import scikit_build_core.build  # noqa: F401
        return True
    except ImportError:
        return False


# --- scikit-build-core: the same configure, given as its config settings -----------------------

def _scikit_build_core_settings(settings):
    import scikit_build_core
    version = tuple(int(part) for part in re.findall(r"\d+", scikit_build_core.__version__)[:2])
    targets_key = "build.targets" if version >= (0, 10) else "cmake.targets"
    config = {
        "cmake.source-dir": str(ROOT),
        "build-dir": str(_build_dir(settings)),
        "cmake.build-type": "Release",
        targets_key: list(settings["targets"]),
        "install.components": list(settings["components"]),
        "install.strip": "true",
        "wheel.packages": list(settings["packages"]),
    }
    if settings["pure_python_tag"]:
        config["wheel.py-api"] = "py3"
    for name, value in _defines(settings).items():
        if name != "CMAKE_BUILD_TYPE":
            config[f"cmake.define.{name}"] = value
    return config


# --- setuptools: CMake run here, then bdist_wheel packs the staging folder ---------------------

def _run(command, **options):
    print("+", shlex.join(str(part) for part in command), flush=True)
    subprocess.run([str(part) for part in command], check=True, **options)


def _cmake():
    cmake = shutil.which("cmake")
    if cmake is None:
        raise BuildError("cmake is not on PATH (Debian: apt-get install cmake)")
    return cmake


def _cached(build_dir, name):
    cache = build_dir / "CMakeCache.txt"
    if not cache.exists():
        return None
    found = re.search(rf"^{name}:[A-Z]+=(.*)$", cache.read_text(encoding="utf-8"), re.MULTILINE)
    return found.group(1) if found else None


def _cmake_install(settings, staging):
    cmake = _cmake()
    build_dir = _build_dir(settings)
    configure = [cmake, "-S", ROOT, "-B", build_dir]
    # A folder configured for another Python is configured anew (its module would not import).
    cached_python = _cached(build_dir, "Python3_EXECUTABLE")
    if cached_python is not None and cached_python != sys.executable:
        configure.append("--fresh")
    defines = {**_defines(settings), "Python3_EXECUTABLE": sys.executable}
    configure += [f"-D{name}={value}" for name, value in defines.items()]
    configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
    _run(configure)
    _run([cmake, "--build", build_dir, "--target", *settings["targets"]])
    for component in settings["components"]:
        _run([cmake, "--install", build_dir, "--component", component, "--prefix", staging,
              "--strip"])
    for package in settings["packages"]:
        shutil.copytree(package, staging / package, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    links = [path for path in staging.rglob("*") if path.is_symlink()]
    if links:  # a wheel would hold each link as a second copy of its target
        raise BuildError(f"symbolic links in the install tree: {links}")


def _packages_and_data(staging):
    """The packages (folders with __init__.py) and, per package, its other files."""
    packages = sorted(".".join(path.parent.relative_to(staging).parts)
                      for path in staging.rglob("__init__.py"))
    data = {}
    for path in sorted(staging.rglob("*")):
        if not path.is_file():
            continue
        owner = path.parent
        while owner != staging and not (owner / "__init__.py").exists():
            owner = owner.parent
        if owner == staging:
            raise BuildError(f"{path.relative_to(staging)} is in no package")
        if path.suffix == ".py" and owner == path.parent:
            continue  # a module of its package
        package = ".".join(owner.relative_to(staging).parts)
        data.setdefault(package, []).append(str(path.relative_to(owner)))
    return packages, data


def _entry_points(metadata):
    """[project.entry-points] with [project.scripts] as its console_scripts group."""
    groups = dict(metadata.get("entry-points", {}))
    if metadata.get("scripts"):
        groups["console_scripts"] = metadata["scripts"]
    return groups


def _setuptools_metadata(metadata):
    attributes = {
        "name": metadata["name"],
        "version": metadata["version"],
        "description": metadata.get("description", ""),
        "python_requires": metadata.get("requires-python"),
        "install_requires": metadata.get("dependencies", []),
        "extras_require": metadata.get("optional-dependencies", {}),
        "entry_points": {group: [f"{name} = {value}" for name, value in points.items()]
                         for group, points in _entry_points(metadata).items()},
    }
    attributes = {key: value for key, value in attributes.items() if value}
    readme = metadata.get("readme")
    if isinstance(readme, str):
        attributes["long_description"] = Path(readme).read_text(encoding="utf-8")
        attributes["long_description_content_type"] = (
            "text/markdown" if readme.endswith(".md") else "text/plain")
    return attributes


def _bdist_wheel_command(pure_python_tag):
    try:
        from setuptools.command.bdist_wheel import bdist_wheel  # setuptools >= 70.1
    except ImportError:
        from wheel.bdist_wheel import bdist_wheel  # Debian 12: python3-wheel

    class KaelBdistWheel(bdist_wheel):
        def get_tag(self):
            python, abi, platform = super().get_tag()
            return ("py3", "none", platform) if pure_python_tag else (python, abi, platform)

    return KaelBdistWheel


def _pack(metadata, settings, staging, scratch, wheel_directory):
    import setuptools
    from setuptools.dist import Distribution

    class BinaryDistribution(Distribution):
        def has_ext_modules(self):  # platform-specific: the files are native code
            return True

    packages, data = _packages_and_data(staging)
    attributes = _setuptools_metadata(metadata)
    before = set(os.listdir(wheel_directory))
    here = os.getcwd()
    os.chdir(staging)  # setuptools reads no pyproject.toml or setup.cfg there
    try:
        setuptools.setup(
            **attributes, packages=packages, package_data=data, include_package_data=False,
            zip_safe=False, distclass=BinaryDistribution,
            cmdclass={"bdist_wheel": _bdist_wheel_command(settings["pure_python_tag"])},
            script_name="kael_wheel", script_args=[
                "--quiet", "egg_info", "--egg-base", str(scratch),
                "build", "--build-base", str(scratch / "build"),
                "bdist_wheel", "--bdist-dir", str(scratch / "bdist"),
                "--dist-dir", str(wheel_directory)])
    finally:
        os.chdir(here)
    made = sorted(set(os.listdir(wheel_directory)) - before)
    wheels = [name for name in made if name.endswith(".whl")]
    if len(wheels) != 1:
        raise BuildError(f"bdist_wheel made {made} in {wheel_directory}")
    return wheels[0]


# --- PEP 517 hooks ------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []  # whatever is installed serves: nothing may be downloaded


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    metadata, settings = _project()
    # Makefiles build one file at a time unless told otherwise (CMake reads this variable).
    os.environ.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    if _use_scikit_build_core():
        import scikit_build_core.build
        config = {**_scikit_build_core_settings(settings), **(config_settings or {})}
        return scikit_build_core.build.build_wheel(wheel_directory, config, metadata_directory)
    wheel_directory = Path(wheel_directory).resolve()
    with tempfile.TemporaryDirectory(prefix="kael-wheel-") as scratch:
        staging = Path(scratch) / "staging"
        staging.mkdir()
        _cmake_install(settings, staging)
        return _pack(metadata, settings, staging, Path(scratch), wheel_directory)
