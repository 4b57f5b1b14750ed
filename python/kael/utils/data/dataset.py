"""kael.utils.data.dataset: the dataset classes and random_split (torch's
torch.utils.data.dataset)."""
from . import (ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,  # noqa: F401
               random_split)

__all__ = ["Dataset", "IterableDataset", "ConcatDataset", "TensorDataset", "Subset",
           "random_split"]
