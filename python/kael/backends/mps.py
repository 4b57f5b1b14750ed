"""Apple's Metal backend as torch.backends.mps asks about it: kael has no Metal device plugin,
so both answers are False and device-picking code falls through to cuda or cpu.

    device = "cuda" if kael.cuda.is_available() else "mps" if kael.backends.mps.is_available() else "cpu"
"""


def is_available():
    """False: no kael plugin serves Apple's Metal (torch.backends.mps.is_available).

    Example:
        >>> kael.backends.mps.is_available()
        False
    """
    return False


def is_built():
    """False: this kael was built without a Metal plugin (torch.backends.mps.is_built).

    Example:
        >>> kael.backends.mps.is_built()
        False
    """
    return False
