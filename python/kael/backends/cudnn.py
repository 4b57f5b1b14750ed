"""cuDNN as PyTorch programs ask about it (torch.backends.cudnn). kael's cuda plugin convolves
with cuDNN where it finds the library at run time (is_available says so); benchmark,
deterministic, enabled and allow_tf32 are recorded and read back but change nothing (the plugin
picks cuDNN's algorithms by its own heuristics; TF32 in matmul is
kael.backends.cuda.matmul.allow_tf32).

    kael.backends.cudnn.benchmark = True
"""
from .. import _kael

benchmark = False
deterministic = False
enabled = True
allow_tf32 = True  # PyTorch's default; cuDNN's TF32 (convolutions), not matmul's


def is_available():
    """Whether cuda:0 is a real GPU whose plugin convolves with cuDNN (loaded by this call when
    it was not yet): False on machines without a GPU, or where cuDNN is not found.

    Example:
        >>> isinstance(kael.backends.cudnn.is_available(), bool)
        True
    """
    from .. import cuda
    if not cuda.is_available():
        return False
    return "cudnn" in _kael._nn._conv.convolution_library("cuda:0").lower()


def version():
    """None, as PyTorch built without cuDNN answers.

    Example:
        >>> kael.backends.cudnn.version() is None
        True
    """
    return None
