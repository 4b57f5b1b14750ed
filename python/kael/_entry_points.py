"""Plugin folders that installed Python distributions declare, as JAX finds its PJRT plugins: an
entry point in the group "kael.plugins" names a module (or object) whose plugin_folder() returns
a folder of kael_plugin_<name>.so files. kael/__init__.py registers them with the core before
anything discovers plugins; a broken one becomes a line of kael.plugin_warnings(), never an
error of `import kael`."""
import importlib.metadata
import os

GROUP = "kael.plugins"

# What went wrong with each broken entry point, for kael.plugin_warnings().
warnings = []


def _entry_points():
    found = importlib.metadata.entry_points()
    if hasattr(found, "select"):  # Python 3.10+
        return list(found.select(group=GROUP))
    return list(found.get(GROUP, ()))


def _distribution(entry_point):
    """'name version' of the distribution declaring the entry point (never raises)."""
    try:
        dist = entry_point.dist  # Python 3.10+
        return f"{dist.metadata['Name']} {dist.version}"
    except Exception:  # noqa: BLE001  (older Python, or metadata without a name)
        return "an unknown distribution"


def _folder_of(entry_point):
    target = entry_point.load()
    plugin_folder = getattr(target, "plugin_folder", None)
    if not callable(plugin_folder):
        raise AttributeError(f"{entry_point.value} has no function plugin_folder()")
    folder = os.fspath(plugin_folder())
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"plugin_folder() returned {folder!r}, which is not a folder")
    return folder


def register(add_plugin_folder):
    """Gives each entry point's folder to add_plugin_folder(folder, origin); returns the folders."""
    folders = []
    try:
        entry_points = _entry_points()
    except Exception as error:  # noqa: BLE001  (a malformed entry_points.txt somewhere)
        warnings.append(f"the {GROUP} entry points could not be read: "
                        f"{type(error).__name__}: {error}")
        return folders
    for entry_point in entry_points:
        distribution = _distribution(entry_point)
        try:
            folder = _folder_of(entry_point)
        except Exception as error:  # noqa: BLE001  (any failure of a third party's code)
            warnings.append(f"plugin entry point '{entry_point.name} = {entry_point.value}' of "
                            f"{distribution} ({GROUP}) was skipped: "
                            f"{type(error).__name__}: {error}")
            continue
        add_plugin_folder(folder, f"entry point {entry_point.value} ({distribution})")
        folders.append(folder)
    return folders
