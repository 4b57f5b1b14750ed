"""kael.utils.data: datasets, samplers and the DataLoader as PyTorch's."""
import numpy as np
import pytest

import kael
from kael.utils.data import (BatchSampler, DataLoader, Dataset, IterableDataset, RandomSampler,
                             SequentialSampler, Subset, TensorDataset, default_collate,
                             random_split)


def test_tensor_dataset_batches_in_order(device):
    x = kael.rand(10, 3, device=device)
    y = kael.arange(10, device=device)
    loader = DataLoader(TensorDataset(x, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7],
                                                                     [8, 9]]
    assert batches[0][0].device == x.device
    assert np.array_equal(batches[2][0].cpu().numpy(), x.cpu().numpy()[8:])
    assert len(DataLoader(TensorDataset(x), batch_size=4, drop_last=True)) == 2


def test_numpy_arrays_become_tensors():
    data = TensorDataset(np.arange(6, dtype=np.float32).reshape(3, 2), np.array([0, 1, 2]))
    x, y = next(iter(DataLoader(data, batch_size=2)))
    assert isinstance(x, kael.Tensor) and x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    assert y.dtype == kael.int64


def test_shuffle_is_a_permutation_reproduced_by_the_generator_state():
    data = TensorDataset(kael.arange(20))
    generator = kael.Generator().manual_seed(3)
    loader = DataLoader(data, batch_size=6, shuffle=True, generator=generator)
    first = [b[0].tolist() for b in loader]
    assert sorted(sum(first, [])) == list(range(20))
    state = generator.get_state()
    second = [b[0].tolist() for b in loader]
    assert second != first
    generator.set_state(state)
    assert [b[0].tolist() for b in loader] == second
    again = DataLoader(data, batch_size=6, shuffle=True, generator=kael.Generator().manual_seed(3))
    assert [b[0].tolist() for b in again] == first


def test_shuffle_without_a_generator_follows_kael_manual_seed():
    data = TensorDataset(kael.arange(12))
    kael.manual_seed(5)
    a = [b[0].tolist() for b in DataLoader(data, batch_size=12, shuffle=True)]
    kael.manual_seed(5)
    assert [b[0].tolist() for b in DataLoader(data, batch_size=12, shuffle=True)] == a


def test_map_datasets_collate_field_by_field():
    class Pairs(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"x": kael.full((2,), float(i)), "label": i, "name": f"item{i}"}

    batch = next(iter(DataLoader(Pairs(), batch_size=3)))
    assert batch["x"].shape == (3, 2) and batch["label"].tolist() == [0, 1, 2]
    assert batch["name"] == ["item0", "item1", "item2"]
    assert [len(b["name"]) for b in DataLoader(Pairs(), batch_size=3)] == [3, 2]


def test_iterable_datasets_and_unbatched_loading():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(5))

    assert [b.tolist() for b in DataLoader(Stream(), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=2, drop_last=True)] == [[0, 1],
                                                                                       [2, 3]]
    with pytest.raises(ValueError):
        DataLoader(Stream(), shuffle=True)
    assert [int(x) for (x,) in DataLoader(TensorDataset(kael.arange(3)), batch_size=None)] == \
        [0, 1, 2]


def test_samplers_subsets_and_split():
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    assert list(BatchSampler(range(5), 2, False)) == [[0, 1], [2, 3], [4]]
    assert len(BatchSampler(range(5), 2, True)) == 2
    sampler = RandomSampler(range(7), generator=kael.Generator().manual_seed(0))
    assert sorted(sampler) == list(range(7)) and len(sampler) == 7
    assert len(list(RandomSampler(range(3), replacement=True, num_samples=10))) == 10
    data = TensorDataset(kael.arange(10))
    train, test = random_split(data, [7, 3], generator=kael.Generator().manual_seed(1))
    assert sorted([int(x) for (x,) in train] + [int(x) for (x,) in test]) == list(range(10))
    assert [len(s) for s in random_split(data, [0.5, 0.5])] == [5, 5]
    with pytest.raises(ValueError):
        random_split(data, [3, 3])
    subset = Subset(data, [4, 1])
    assert [b[0].tolist() for b in DataLoader(subset, batch_size=2)] == [[4, 1]]


def test_errors_as_pytorch():
    data = TensorDataset(kael.arange(4))
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(data, batch_size=0)
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(data, sampler=SequentialSampler(data), shuffle=True)
    with pytest.raises(ValueError, match="size mismatch"):
        TensorDataset(kael.arange(3), kael.arange(4))
    with pytest.raises(TypeError):
        default_collate([object()])
