"""--name=value command-line overrides of a script's global settings (as nanoGPT's
configurator): each value is read as a Python literal of the setting's type, strings as given."""
import ast


def override(settings, arguments):
    for argument in arguments:
        key, _, value = argument.lstrip("-").partition("=")
        if key not in settings or key.startswith("_"):
            raise SystemExit(f"unknown setting {key}")
        default = settings[key]
        settings[key] = value if isinstance(default, str) else type(default)(
            ast.literal_eval(value))
