"""Plugin wheels: `import kael` searches the folder of every "kael.plugins" entry point of the
installed distributions (python/kael/_entry_points.py), and a broken entry point becomes a line
of kael.plugin_warnings(), not an error. Fake distributions (a *.dist-info folder on sys.path)
stand for the wheels; each case imports kael in a fresh process."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import kael

PROBE = """
import json, kael
print(json.dumps({"plugins": [p.to_dict() for p in kael.plugins()],
                  "steps": kael.discovery_steps(), "warnings": kael.plugin_warnings()}))
"""


def fake_distribution(root, name, entry_points, modules=None):
    """A distribution `name` 1.0 on the path `root`, with its [kael.plugins] lines and modules."""
    dist_info = root / f"{name.replace('-', '_')}-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[kael.plugins]\n" + entry_points + "\n")
    for module, text in (modules or {}).items():
        (root / f"{module}.py").write_text(textwrap.dedent(text))


def import_kael(root):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def a_plugin_file():
    """A small plugin this kael loaded: the emulated one where it is (a build), else cpu's."""
    loaded = {p.name: p.path for p in kael.plugins() if p.status == "loaded"}
    return loaded.get("emulated", loaded["cpu"])


def test_an_entry_points_folder_is_searched_first_with_its_origin(tmp_path):
    plugin = a_plugin_file()
    folder = tmp_path / "vendor" / "plugins"
    folder.mkdir(parents=True)
    shutil.copy(plugin, folder)
    fake_distribution(tmp_path / "site", "vendor-kael-plugin", "vendor = vendor_plugin", {
        "vendor_plugin": f"""
            def plugin_folder():
                return {str(folder)!r}
            """})
    info = import_kael(tmp_path / "site")
    origin = "entry point vendor_plugin (vendor-kael-plugin 1.0)"
    assert info["steps"][0]["folder"] == str(folder) and info["steps"][0]["origin"] == origin
    copied = [p for p in info["plugins"] if p["path"] == str(folder / os.path.basename(plugin))]
    assert len(copied) == 1 and copied[0]["origin"] == origin, info["plugins"]
    assert copied[0]["status"] in ("loaded", "no devices"), copied[0]
    assert info["warnings"] == []


def test_broken_entry_points_are_warnings_naming_the_distribution(tmp_path):
    site = tmp_path / "site"
    fake_distribution(site, "missing-module", "gone = no_such_module_for_kael")
    fake_distribution(site, "no-function", "bare = bare_plugin", {"bare_plugin": "X = 1\n"})
    fake_distribution(site, "bad-path", "lost = lost_plugin", {"lost_plugin": """
        def plugin_folder():
            return "/nonexistent/kael-plugins"
        """})
    fake_distribution(site, "raises", "boom = boom_plugin", {"boom_plugin": """
        def plugin_folder():
            raise RuntimeError("no folder today")
        """})
    info = import_kael(site)
    warnings = info["warnings"]
    broken = [("missing-module 1.0", "ModuleNotFoundError"), ("no-function 1.0", "plugin_folder"),
              ("bad-path 1.0", "/nonexistent/kael-plugins"), ("raises 1.0", "no folder today")]
    for distribution, error in broken:
        assert any(distribution in w and error in w for w in warnings), (distribution, warnings)
    assert len(warnings) == 4
    # None of them reached the core (an installed kael-cuda may); kael still works.
    origins = " ".join(step["origin"] for step in info["steps"])
    assert not any(distribution in origins for distribution, _ in broken), info["steps"]
    assert any(p["name"] == "cpu" and p["status"] == "loaded" for p in info["plugins"])
