"""kael's CUDA plugin, installed as a wheel. `import kael` finds it through this distribution's
"kael.plugins" entry point and searches plugin_folder(); nothing here imports kael."""
import os


def plugin_folder():
    """The folder holding kael_plugin_cuda.so."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "kael", "plugins")
