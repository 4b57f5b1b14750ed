"""The shipping test of kael's Python wheels (CTest shipping_python_wheels): builds the kael wheel
(and kael-cuda with --cuda) the documented way, installs them with pip into a fresh venv, and
checks what a user gets: kael imported from the venv, the cpu device, the cuda plugin found
through its entry point, the Python suite once (on cpu and the emulated plugin's cuda:0 when
--emulated is given, which covers every cpu test as well; else on cpu), a clean uninstall.

    check_wheels.py --source <repo> --work <scratch> [--emulated <kael_plugin_emulated.so>]
                    [--gpt2-vocabulary <folder>] [--cuda | --gpu]

--gpu (scripts/cuda/wheels.sh): kael-cuda too, a real cuda:0 required and the suite run on it.
Exit 77 (CTest SKIP_RETURN_CODE) when venv, pip or a wheel builder is missing (with --gpu, what
pip does is done without it). The wheel builds reuse KAEL_WHEEL_BUILD_DIR and
KAEL_CUDA_WHEEL_BUILD_DIR when set (python/build_backend).
"""
import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

import wheel_contents
from wheel_venv import build_wheel, install, make_venv, run, timings, works

SKIP = 77
# The user's environment, without what would let kael be found another way than from the venv.
CLEAN = {name: value for name, value in os.environ.items()
         if name not in ("PYTHONPATH", "KAEL_PLUGIN_PATH", "LD_LIBRARY_PATH", "KAEL_PLUGINS",
                         "KAEL_DEVICE_PLUGIN", "KAEL_TEST_DEVICE", "PYTHONHOME")}
PROBE = """
import json, kael
print(json.dumps({"file": kael.__file__, "devices": [d.to_dict() for d in kael.devices()],
                  "plugins": [p.to_dict() for p in kael.plugins()],
                  "warnings": kael.plugin_warnings()}))
"""


def missing_tools(python):
    checks = {"venv (python3-venv)": "import venv, ensurepip",
              "pip (python3-pip)": "import pip",
              "a wheel builder (python3-setuptools and python3-wheel, or scikit-build-core)":
              "import importlib.util as u; assert u.find_spec('scikit_build_core') or "
              "(u.find_spec('setuptools') and u.find_spec('wheel'))"}
    return [name for name, code in checks.items() if not works(python, code)]


def probe(venv_python, env, cwd):
    return json.loads(run([venv_python, "-c", PROBE], env=env, cwd=cwd).strip().splitlines()[-1])


def check_installed(info, site_packages, cuda, gpu):
    kael_file = Path(info["file"]).resolve()
    if site_packages not in kael_file.parents:
        sys.exit(f"FAILED: kael was imported from {kael_file}, not from {site_packages}")
    if not info["devices"] or info["devices"][0]["device"] != "cpu":
        sys.exit(f"FAILED: kael.devices() lists no cpu first: {info['devices']}")
    print("kael.devices():", [device["device"] for device in info["devices"]])
    for plugin in info["plugins"]:
        print(f"  plugin {plugin['name']}: {plugin['status']} [{plugin['origin']}] "
              f"{plugin['path']} {plugin['reason']}")
        if site_packages not in Path(plugin["path"]).resolve().parents:
            sys.exit(f"FAILED: plugin {plugin['name']} came from outside the venv")
    if info["warnings"]:
        sys.exit(f"FAILED: plugin warnings: {info['warnings']}")
    if not cuda:
        return
    found = [plugin for plugin in info["plugins"] if plugin["name"] == "cuda"]
    expected_origin = f"entry point kael_cuda (kael-cuda {wheel_contents.version()})"
    if len(found) != 1 or found[0]["origin"] != expected_origin:
        sys.exit(f"FAILED: no cuda plugin with origin '{expected_origin}': {found}")
    cuda_plugin = found[0]
    real = [d for d in info["devices"] if d["device"] == "cuda:0" and not d["emulated"]]
    if gpu and (cuda_plugin["status"] != "loaded" or not real):
        sys.exit(f"FAILED: no real cuda:0 from the cuda wheel: {cuda_plugin}")
    if gpu or real:
        print(f"cuda:0: {real[0]['name']}, plugin {real[0]['plugin']}")
    elif cuda_plugin["status"] != "no devices" or not cuda_plugin["reason"]:
        sys.exit(f"FAILED: without a GPU the cuda plugin should be 'no devices' with the "
                 f"driver's reason: {cuda_plugin}")


def run_suite(venv_python, source, env, cwd, label):
    tests = source / "python" / "tests"
    # As the python_tests CTest runs it (python/CMakeLists.txt); the tokenizer's reference is a
    # JavaScript encoder, so without node (a GPU machine) its tests are left out, said so.
    ignored = [tests / "test_examples.py"]
    if not (env.get("KAEL_NODE") or shutil.which("node")):
        ignored.append(tests / "test_tokenizer.py")
        print("note: no node: python/tests/test_tokenizer.py is left out")
    output = run([venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                  *[f"--ignore={path}" for path in ignored], tests],
                 env=env, cwd=cwd, what=f"python suite ({label})")
    print(f"python suite ({label}):", output.strip().splitlines()[-1])


def site_listing(site_packages):
    return sorted(str(path.relative_to(site_packages)) for path in site_packages.rglob("*"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--emulated", type=Path, help="kael_plugin_emulated.so of a build")
    parser.add_argument("--gpt2-vocabulary", type=Path,
                        help="the folder with GPT-2's encoder.json and vocab.bpe to ship")
    parser.add_argument("--cuda", action="store_true", help="also build and check kael-cuda")
    parser.add_argument("--gpu", action="store_true", help="kael-cuda on a real cuda:0")
    args = parser.parse_args()
    python = sys.executable  # the wheels are built for, and the venv made from, this Python
    missing = [] if args.gpu else missing_tools(python)
    if missing:
        print(f"SKIP: {python} lacks {', '.join(missing)}")
        return SKIP
    vocabulary = bool(args.gpt2_vocabulary and (args.gpt2_vocabulary / "encoder.json").exists())
    if vocabulary:
        os.environ["CMAKE_ARGS"] = (os.environ.get("CMAKE_ARGS", "") +
                                    f" -DKAEL_GPT2_PACKAGE_DIR={args.gpt2_vocabulary}")
    source = args.source.resolve()
    shutil.rmtree(args.work, ignore_errors=True)
    dist = args.work / "dist"
    dist.mkdir(parents=True)

    cuda = args.cuda or args.gpu
    wheels = [build_wheel(python, source / "python", dist)]
    if cuda:
        wheels.append(build_wheel(python, source / "python" / "cuda", dist))
    python_tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    for path in wheels:
        wheel_contents.check(path, python_tag, platform.machine(), vocabulary)
        print(f"{path.name}: {path.stat().st_size} bytes, contents checked")

    venv_python, site_packages = make_venv(python, args.work / "venv")
    before = site_listing(site_packages)
    by_pip = install(python, venv_python, site_packages, wheels)

    scratch = Path(tempfile.mkdtemp(prefix="kael-wheel-run-", dir=args.work))
    check_installed(probe(venv_python, CLEAN, scratch), site_packages, cuda, args.gpu)
    if by_pip:  # pip writes the console scripts: kael-run, the launcher
        launcher = Path(venv_python).parent / "kael-run"
        shown = run([str(launcher), "--help"], env=CLEAN, cwd=scratch, what="kael-run --help")
        if "--nproc_per_node" not in shown:
            sys.exit(f"FAILED: {launcher} --help printed {shown!r}")
        print(f"{launcher}: runs")
    if args.gpu:
        run_suite(venv_python, source, {**CLEAN, "KAEL_TEST_DEVICE": "cuda:0"}, scratch,
                  "cpu and cuda:0")
    elif not args.emulated:  # with it, the run below takes every cpu test too
        run_suite(venv_python, source, CLEAN, scratch, "cpu")
    if args.emulated:
        emulated = args.work / "emulated"  # the emulated plugin alone, no other file beside it
        emulated.mkdir()
        shutil.copy2(args.emulated, emulated)
        env = {**CLEAN, "KAEL_PLUGIN_PATH": str(emulated)}
        devices = [d["device"] for d in probe(venv_python, env, scratch)["devices"]]
        if "cuda:0" not in devices:
            sys.exit(f"FAILED: with KAEL_PLUGIN_PATH={emulated} the devices are {devices}")
        run_suite(venv_python, source, env, scratch, "cpu and emulated cuda")

    if by_pip:
        names = [wheel_contents.distribution(path.name) for path in wheels]
        run([venv_python, "-m", "pip", "uninstall", "-y", *names], what="pip uninstall")
        left = sorted(set(site_listing(site_packages)) - set(before))
        if left:
            sys.exit(f"FAILED: pip uninstall left in {site_packages}: {left}")
        print("uninstalled: site-packages is as before the install")
    for what, seconds in timings:
        print(f"  {seconds:7.1f} s  {what}")
    print("wheels: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
