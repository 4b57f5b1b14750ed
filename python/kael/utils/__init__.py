"""kael.utils: data loading (kael.utils.data) and activation checkpointing
(kael.utils.checkpoint)."""
from . import checkpoint, data  # noqa: F401
