"""What the kael and kael-cuda wheels must hold (check_wheels.py): their names and tags, every
file of the package and nothing outside it, and RPATHs that reach only inside the wheel."""
import email.parser
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

SOURCE = Path(__file__).resolve().parents[2]


def version():
    text = (SOURCE / "CMakeLists.txt").read_text(encoding="utf-8")
    return re.search(r"project\(kael\s+VERSION\s+([0-9.]+)", text).group(1)


def distribution(wheel_name):
    return wheel_name.split("-")[0]


def fail(message):
    sys.exit(f"FAILED: {message}")


def pure_python_files():
    package = SOURCE / "python" / "kael"
    return sorted(f"kael/{path.relative_to(package).as_posix()}" for path in package.rglob("*")
                  if path.suffix in (".py", ".pyi") or path.name == "py.typed")


def metadata(archive, dist_info):
    return email.parser.Parser().parsestr(archive.read(f"{dist_info}/METADATA").decode())


def dynamic_section(elf):
    """(RUNPATH/RPATH entries, NEEDED libraries) of an ELF file (readelf -d), or None."""
    readelf = shutil.which("readelf")
    if readelf is None:
        return None
    output = subprocess.run([readelf, "-d", elf], capture_output=True, text=True,
                            check=True).stdout
    entries = []
    for found in re.findall(r"\((?:RUNPATH|RPATH)\).*\[(.*)\]", output):
        entries += found.split(":")
    return entries, re.findall(r"\(NEEDED\).*\[(.*)\]", output)


def check_rpaths(archive, members):
    """Every RPATH entry is $ORIGIN-relative and stays inside the wheel."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for member in members:
            archive.extract(member, root)
            section = dynamic_section(root / member)
            if section is None:
                print("note: no readelf, RPATHs not checked")
                return
            entries, needed = section
            # C++ exceptions cross from libkael_core through kael._kael into Python, where
            # other extensions (torch) use the system's libstdc++: one runtime for all, never a
            # static copy (a toolchain linking -static-libstdc++ gave crashes at import torch).
            if ("libkael_core" in member or "libkael_nn" in member or "/_kael." in member) and \
                    "libstdc++.so.6" not in needed:
                fail(f"{member}: libstdc++ is linked statically (NEEDED: {needed}); build the "
                     "wheel with a compiler that links the shared libstdc++.so.6")
            for entry in entries:
                if not entry.startswith("$ORIGIN"):
                    fail(f"{member}: RPATH entry {entry!r} is not $ORIGIN-relative")
                place = (root / member).parent / entry.replace("$ORIGIN", ".", 1)
                if root.resolve() not in place.resolve().parents and \
                        place.resolve() != root.resolve():
                    fail(f"{member}: RPATH entry {entry!r} leads outside the wheel")


# The cpu plugin's oneDNN convolutions, opened at run time (absent where the build lacked oneDNN).
ONEDNN = "kael/lib/kael/plugins/kael_cpu_onednn.so"


def check_kael(name, archive, python_tag, arch, vocabulary):
    expected = f"kael-{version()}-{python_tag}-{python_tag}-linux_{arch}.whl"
    if name != expected:
        fail(f"the kael wheel is {name}, expected {expected}")
    members = set(archive.namelist())
    dist_info = f"kael-{version()}.dist-info"
    required = set(pure_python_files()) | {
        "kael/_kael.pyi", "kael/py.typed", "kael/lib/libkael_core.so.0", "kael/lib/libkael_nn.so.0",
        "kael/lib/kael/plugins/kael_plugin_cpu.so", f"{dist_info}/RECORD"}
    if vocabulary:
        required |= {"kael/share/kael/gpt2/encoder.json", "kael/share/kael/gpt2/vocab.bpe"}
    missing = sorted(required - members)
    if missing:
        fail(f"{name} lacks {missing}")
    module_name = rf"kael/_kael\.cpython-{python_tag[2:]}.*\.so"
    modules = [m for m in members if re.fullmatch(module_name, m)]
    if len(modules) != 1:
        fail(f"{name}: no single module kael/_kael.cpython-{python_tag[2:]}*.so: {modules}")
    shared = sorted(m for m in members if re.search(r"\.so(\.|$)", m))
    expected_shared = sorted(modules + ["kael/lib/libkael_core.so.0", "kael/lib/libkael_nn.so.0",
                                        "kael/lib/kael/plugins/kael_plugin_cpu.so"] +
                             [ONEDNN] * (ONEDNN in members))  # where oneDNN was found
    if shared != expected_shared:  # no cuda or emulated plugin, no second copy of the core
        fail(f"{name}: shared libraries {shared}, expected {expected_shared}")
    stray = sorted(m for m in members
                   if PurePosixPath(m).parts[0] not in ("kael", dist_info))
    if stray:
        fail(f"{name}: files outside kael/: {stray}")
    check_rpaths(archive, shared)


def check_kael_cuda(name, archive, arch):
    expected = f"kael_cuda-{version()}-py3-none-linux_{arch}.whl"
    if name != expected:
        fail(f"the kael-cuda wheel is {name}, expected {expected}")
    dist_info = f"kael_cuda-{version()}.dist-info"
    files = sorted(m for m in archive.namelist() if not m.startswith(f"{dist_info}/"))
    wanted = ["kael_cuda/__init__.py", "kael_cuda/lib/kael/plugins/kael_plugin_cuda.so"]
    if files != wanted:
        fail(f"{name} holds {files}, expected only {wanted}")
    points = archive.read(f"{dist_info}/entry_points.txt").decode()
    if not re.search(r"^\[kael\.plugins\]\s*^cuda\s*=\s*kael_cuda\s*$", points, re.MULTILINE):
        fail(f"{name}: no entry point cuda = kael_cuda in [kael.plugins]: {points!r}")
    requires = [re.sub(r"[\s()]", "", r) for r in
                metadata(archive, dist_info).get_all("Requires-Dist") or []]
    if requires != [f"kael=={version()}"]:
        fail(f"{name}: Requires-Dist {requires}, expected kael=={version()}")
    check_rpaths(archive, [wanted[1]])


def check(path, python_tag, arch, vocabulary):
    with zipfile.ZipFile(path) as archive:
        if distribution(path.name) == "kael":
            check_kael(path.name, archive, python_tag, arch, vocabulary)
        else:
            check_kael_cuda(path.name, archive, arch)
