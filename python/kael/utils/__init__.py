"""kael.utils: data loading (kael.utils.data)."""
from . import data  # noqa: F401
