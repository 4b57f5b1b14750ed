"""Advanced indexing t[key] and t[key] = value against numpy, on every device, and the rule for
negative indices of the index ops (gather, scatter_add_, index_select, embedding, cross_entropy:
errors, as in PyTorch; t[key] wraps them)."""
import contextlib
import threading

import numpy as np
import pytest

import kael

SHAPE = (3, 4, 5)
BASE = np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE) - 20
MASK_3 = np.array([True, False, True])
MASK_4 = np.array([False, True, True, False])
MASK_34 = BASE[:, :, 0] > -5
MASK_345 = BASE % 3 == 0

# Keys whose results numpy and PyTorch agree on: index lists and arrays (which become kael
# tensors on the device), bool masks of any leading shape, mixed with ints, slices, None and
# Ellipsis, with adjacent and separated index tensors.
KEYS = [
    [0, 2],
    [-1, 0, -3],
    [[0, 1], [2, 0]],
    [],
    np.array([2, 1]),
    (np.array([0, 2, 1]), np.array([1, 3, 0])),
    (np.array([[0], [2]]), np.array([1, 3, 0])),
    (np.array([0, 2]), np.array([1, 3]), np.array([4, -5])),
    (slice(None), [1, 3]),
    (slice(1, None), [0, 0], [4, 2]),
    ([0, 2], slice(None), [1, 3]),
    ([0, 2], slice(1, 3), [[1], [3]]),
    (slice(None), slice(None), [4, 0]),
    (None, [0, 2], [1, 1]),
    ([0, 2], None, [1, 1]),
    (Ellipsis, [0, 4]),
    ([1], Ellipsis, [2]),
    (1, [0, 2]),
    ([0, 2], 1),
    (slice(None), 1, [0, 2]),
    ([2, 0], 0, [1, 3]),
    (slice(None, None, 2), [3, 1], slice(1, 4)),
    MASK_3,
    MASK_34,
    MASK_345,
    (slice(None), MASK_4),
    (MASK_3, 1),
    (MASK_3, [0, 3]),
    (MASK_3, slice(None), [0, 3]),
    (Ellipsis, BASE[0, 0] > -18),
    (slice(None), MASK_4, 2),
    ([True, False, True],),
    (BASE[:, 1, 1] < 0, 1),
    np.zeros(3, dtype=bool),
]


def to_kael_key(key, device):
    """The key with every numpy array as a kael tensor on device (lists stay lists)."""
    def convert(item):
        return kael.tensor(item, device=device) if isinstance(item, np.ndarray) else item
    return tuple(convert(item) for item in key) if isinstance(key, tuple) else convert(key)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("key", KEYS, ids=[str(i) for i in range(len(KEYS))])
def test_read_matches_numpy(device, dtype, key):
    n = BASE.astype(dtype)
    t = kael.tensor(n, device=device)
    got = t[to_kael_key(key, device)]
    expected = n[key]
    assert got.device == device
    assert tuple(got.shape) == expected.shape, str(key)
    np.testing.assert_array_equal(got.numpy(), expected, err_msg=str(key))


@pytest.mark.parametrize("key", KEYS, ids=[str(i) for i in range(len(KEYS))])
def test_write_matches_numpy(device, key):
    selected = BASE[key]
    if key_has_duplicates(key):
        pytest.skip("repeated positions: only one value wins (tested below)")
    values = [7.5, np.arange(selected.size, dtype=np.float32).reshape(selected.shape) + 100]
    if selected.ndim > 0:
        values.append(np.arange(selected.shape[-1], dtype=np.float32) - 50)  # broadcast
    for value in values:
        n = BASE.copy()
        t = kael.tensor(n, device=device)
        n[key] = value
        t[to_kael_key(key, device)] = (kael.tensor(value, device=device)
                                       if isinstance(value, np.ndarray) else value)
        np.testing.assert_array_equal(t.numpy(), n, err_msg=str(key))


def key_has_duplicates(key):
    positions = np.arange(BASE.size).reshape(SHAPE)[key]
    return np.unique(positions).size != positions.size


def test_issue_reproducers(device):
    d = np.arange(36, dtype=np.float32).reshape(6, 6)
    t = kael.tensor(d, device=device)
    rows = kael.tensor([0, 2, 4, 5], device=device)
    cols = kael.tensor([1, 1, 3, 0], device=device)
    assert t[rows, cols].shape == (4,)
    np.testing.assert_array_equal(t[rows, cols].numpy(), d[[0, 2, 4, 5], [1, 1, 3, 0]])

    a = kael.zeros(5, device=device)
    a[kael.tensor([1, 3], device=device)] = kael.tensor([4.0, 5.0], device=device)
    assert a.tolist() == [0, 4, 0, 5, 0]

    x = np.array([[1, -2], [3, 4], [5, -6]], dtype=np.float32)
    X = kael.tensor(x, device=device)
    rowmask = kael.tensor([True, False, True], device=device)
    X[rowmask] = 0.5
    x[[True, False, True]] = 0.5
    np.testing.assert_array_equal(X.numpy(), x)

    y = np.array([[1, -2], [3, 4], [5, -6]], dtype=np.float32)
    Y = kael.tensor(y, device=device)
    np.testing.assert_array_equal(Y[Y[:, 1] < 0, 1].numpy(), y[y[:, 1] < 0, 1])
    Y[Y[:, 1] < 0, 1] = 0.0
    y[y[:, 1] < 0, 1] = 0.0
    np.testing.assert_array_equal(Y.numpy(), y)


@pytest.mark.parametrize("key", [np.array([2, 0]), np.array([0, 2], dtype=np.int32),
                                 (slice(None), np.array([True, False, True, True])),
                                 (np.array(1), np.array([[0], [3]])), np.int64(2),
                                 [np.int64(0), 2], ((0, 1),)], ids=str)
def test_numpy_arrays_and_scalars_index_as_in_numpy(device, key):
    t = kael.tensor(BASE, device=device)
    np.testing.assert_array_equal(t[key].numpy(), BASE[key])
    n = BASE.copy()
    n[key] = -1.0
    t[key] = -1.0
    np.testing.assert_array_equal(t.numpy(), n)


def test_ints_select_before_separated_index_tensors_as_in_pytorch(device):
    # numpy moves the broadcast dimension first here ((2, 4)); PyTorch selects the int first.
    t = kael.tensor(BASE, device=device)
    np.testing.assert_array_equal(t[0, :, [0, 1]].numpy(), BASE[0][:, [0, 1]])


def test_repeated_positions_write_one_of_the_values(device):
    t = kael.zeros(4, device=device)
    t[kael.tensor([2, 2, 0, 2], device=device)] = kael.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    got = t.tolist()
    assert got[0] == 3.0 and got[1] == 0.0 and got[3] == 0.0 and got[2] in (1.0, 2.0, 4.0)


def test_python_bools_and_empty_results(device):
    t = kael.tensor(BASE, device=device)
    assert t[True].shape == (1,) + SHAPE
    assert t[False].shape == (0,) + SHAPE
    assert t[None, [0]].shape == (1, 1, 4, 5)
    assert t[[], 1].shape == (0, 5)
    s = kael.tensor(3.0, device=device)
    assert s[True].tolist() == [3.0] and s[None].shape == (1,)


@contextlib.contextmanager
def index_error(device, match):
    """IndexError at the call (cpu) or, as CUDA reports a device-side error, at the device's next
    synchronisation (the emulated cuda:0 defers its index checks the same way)."""
    with pytest.raises(IndexError, match=match):
        yield
        kael.synchronize(device)


def test_bad_keys_raise_index_errors(device):
    t = kael.tensor(BASE, device=device)
    with index_error(device, "out of bounds for dimension 0 with size 3"):
        t[[0, 3]]
    with index_error(device, "out of bounds for dimension 1 with size 4"):
        t[:, [-5]]
    with pytest.raises(IndexError, match="broadcast together"):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="does not match"):
        t[kael.tensor([True, False], device=device)]
    with pytest.raises(IndexError, match="int64, int32, uint8 or bool"):
        t[kael.tensor([0.0], device=device)]
    with pytest.raises(IndexError, match="too many indices"):
        t[[0], [0], [0], [0]]
    with index_error(device, "out of bounds"):
        t[2 ** 70]
    with index_error(device, "out of bounds"):
        t[[0, 5]] = 1.0
    with pytest.raises(ValueError, match="cannot be broadcast"):
        t[[0, 1]] = kael.ones(3, device=device)
    if device == "cpu":  # a GPU's writes for the good indices of t[[0, 5]] may have landed
        np.testing.assert_array_equal(t.numpy(), BASE)


def test_index_errors_surface_once_and_work_goes_on(device):
    weight = kael.tensor(BASE[0], device=device)
    try:
        picked = kael.embedding(weight, kael.tensor([1, 7, 9], device=device))
        str(picked)  # printing synchronises
    except IndexError as error:  # at the call (cpu) or when printed (a deferred check)
        message = "embedding: index 7 is out of bounds for dimension 0 with size 4"
        if device != "cpu":  # a deferred check names the thread that issued the op
            message += (f" (issued by thread {threading.get_native_id()}; a cuda index check "
                        "reports at the next synchronising call)")
        assert str(error) == message
    else:
        pytest.fail("no IndexError")
    kael.synchronize(device)  # reported once
    picked = kael.embedding(weight, kael.tensor([3, 0], device=device))
    np.testing.assert_array_equal(picked.numpy(), BASE[0][[3, 0]])


def test_gradients_through_reads_and_writes(device):
    x = kael.tensor(BASE[0].astype(np.float64), device=device, requires_grad=True)
    rows, cols = [0, 2, 0], [1, 3, 1]
    (x[rows, cols] * 2.0).sum().backward()
    expected = np.zeros((4, 5))
    np.add.at(expected, (rows, cols), 2.0)
    np.testing.assert_array_equal(x.grad.numpy(), expected)

    base = kael.tensor(BASE[0].astype(np.float64), device=device, requires_grad=True)
    value = kael.tensor([1.0, 2.0], dtype="f64", device=device, requires_grad=True)
    a = base * 1.0
    a[a[:, 0] > -15, 2] = value
    (a * a).sum().backward()
    kept = np.ones((4, 5))
    kept[2:, 2] = 0.0
    np.testing.assert_array_equal(base.grad.numpy(), 2.0 * BASE[0] * kept)
    np.testing.assert_array_equal(value.grad.numpy(), [2.0, 4.0])


def test_index_ops_refuse_negative_indices_and_name_themselves(device):
    data = kael.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    negative = kael.tensor([[0, -1]], device=device)
    with index_error(device, "gather: index -1"):
        kael.gather(data, 1, negative)
    target = kael.zeros(2, 3, device=device)
    with index_error(device, "scatter_add_: index -1"):
        target.scatter_add_(1, negative, kael.ones(1, 2, device=device))
    if device == "cpu":  # checked before any write; a GPU may have added the good index's part
        assert target.tolist() == [[0.0] * 3] * 2
    with index_error(device, "index_select: index -1"):
        data.index_select(1, kael.tensor([-1], device=device))
    with index_error(device, "index_select: index 3"):
        data.index_select(1, kael.tensor([3], device=device))
    with index_error(device, "embedding: index -1"):
        kael.embedding(data, kael.tensor([-1], device=device))
    with index_error(device, "embedding: index 2"):
        kael.embedding(data, kael.tensor([2], device=device))
    with index_error(device, "cross_entropy: target 3"):
        kael.cross_entropy(data, kael.tensor([0, 3], device=device))
    with index_error(device, "cross_entropy: target -1"):
        kael.cross_entropy(data, kael.tensor([-1, 0], device=device))
    # Python indexing does wrap.
    assert data[[-1], [-1]].tolist() == [6.0]


def random_key(rng, shape):
    """A random key over shape: ints, slices, None, at most one Ellipsis, index lists (negative
    entries included) and bool masks over one or more dimensions."""
    items, dim = [], 0
    ellipsis = False
    while dim < len(shape) and rng.random() < 0.85:
        if ellipsis:
            break  # what follows an Ellipsis counts from the end: keep keys simple
        size = shape[dim]
        choice = rng.integers(7)
        if choice == 0:
            items.append(int(rng.integers(-size, size)))
            dim += 1
        elif choice == 1:
            start, step = int(rng.integers(0, size + 1)), int(rng.integers(1, 3))
            items.append(slice(start, None, step))
            dim += 1
        elif choice == 2:
            items.append(None)
        elif choice == 3 and not ellipsis:
            ellipsis = True
            items.append(Ellipsis)
        elif choice in (4, 5):
            length = int(rng.integers(0, 4)) if rng.random() < 0.3 else 3
            items.append([int(v) for v in rng.integers(-size, size, length)])
            dim += 1
        else:
            dims = int(rng.integers(1, len(shape) - dim + 1))
            items.append(rng.random(shape[dim:dim + dims]) < 0.5)
            dim += dims
    return tuple(items)


def numpy_agrees_with_pytorch(key):
    """numpy counts ints as advanced indices when placing the broadcast dimensions; PyTorch
    selects them first. Keys where that changes adjacency are left out (tested on their own)."""
    def adjacent(positions):
        return all(b == a + 1 for a, b in zip(positions, positions[1:]))
    def is_array(item):
        return isinstance(item, (list, np.ndarray))
    arrays = [i for i, item in enumerate(key) if is_array(item)]
    if not arrays:
        return True
    if any(item is Ellipsis for item in key[arrays[0]:arrays[-1]]):
        return False
    with_ints = [i for i, item in enumerate(key) if is_array(item) or isinstance(item, int)]
    pytorch = [i for i in range(len(key)) if i in arrays or not isinstance(key[i], int)]
    return adjacent(with_ints) == adjacent([pytorch.index(i) for i in arrays])


def test_random_keys_match_numpy(device):
    rng = np.random.default_rng(20261201)
    checked = 0
    while checked < 300:
        shape = tuple(int(s) for s in rng.integers(1, 5, rng.integers(1, 5)))
        n = rng.standard_normal(shape).astype(np.float32)
        key = random_key(rng, shape)
        if not numpy_agrees_with_pytorch(key):
            continue
        try:
            expected = n[key]
        except IndexError:
            continue  # e.g. index lists that do not broadcast together
        t = kael.tensor(n, device=device)
        kael_key = to_kael_key(key, device)
        got = t[kael_key]
        assert tuple(got.shape) == expected.shape, (shape, key)
        np.testing.assert_array_equal(got.numpy(), expected, err_msg=str((shape, key)))
        written = n.copy()
        positions = np.arange(n.size).reshape(shape)[key]
        if np.unique(positions).size == positions.size:
            value = rng.standard_normal(expected.shape).astype(np.float32)
            written[key] = value
            # (reshape: kael.tensor of a 0-d numpy array gives shape [1])
            t[kael_key] = kael.tensor(value, device=device).reshape(expected.shape)
            np.testing.assert_array_equal(t.numpy(), written, err_msg=str((shape, key)))
        checked += 1
