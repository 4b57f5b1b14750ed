"""The one line a ported program changes: which library answers to `torch`.

KAEL_PORTING_BACKEND=torch runs the same programs on PyTorch, for comparison; anything else (the
default) on kael. The programs here import `torch`, `nn` and `F` from this module only.
"""
import os

if os.environ.get("KAEL_PORTING_BACKEND", "kael") == "torch":
    import torch  # noqa: F401
    from torch import nn  # noqa: F401
    from torch.nn import functional as F  # noqa: F401
else:
    import kael as torch  # noqa: F401
    from kael import nn  # noqa: F401
    from kael.nn import functional as F  # noqa: F401

if os.environ.get("KAEL_PORTING_BACKEND", "kael") == "torch":
    import torch.utils.data as torch_utils_data  # noqa: F401
else:
    import kael.utils.data as torch_utils_data  # noqa: F401
