"""kael.linalg: linear-algebra functions with torch.linalg's names.

    import kael
    kael.linalg.vector_norm(kael.tensor([3., 4.]))  # tensor(5.)
"""
from ._kael._linalg import vector_norm  # noqa: F401

__all__ = ["vector_norm"]
