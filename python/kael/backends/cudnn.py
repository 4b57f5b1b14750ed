"""Settings PyTorch programs give cuDNN (torch.backends.cudnn). kael's kernels do not go
through cuDNN, so benchmark, deterministic, enabled and allow_tf32 are recorded and read back but
change nothing (TF32 in matmul is kael.backends.cuda.matmul.allow_tf32).

    kael.backends.cudnn.benchmark = True
"""
benchmark = False
deterministic = False
enabled = True
allow_tf32 = True  # PyTorch's default; cuDNN's TF32 (convolutions), not matmul's


def is_available():
    """False: kael does not call cuDNN (its own kernels run every op).

    Example:
        >>> kael.backends.cudnn.is_available()
        False
    """
    return False


def version():
    """None, as PyTorch built without cuDNN answers.

    Example:
        >>> kael.backends.cudnn.version() is None
        True
    """
    return None
