"""kael.nn.utils.rnn: sequences of different lengths for the recurrent layers, as
torch.nn.utils.rnn: PackedSequence, pack_padded_sequence, pad_packed_sequence, pack_sequence and
pad_sequence. A PackedSequence holds the time steps one after another, each with the sequences
still running at that step (longest first); RNN, LSTM and GRU take it and return one."""
import collections

from ... import _kael
from ..._kael import Tensor


class PackedSequence(collections.namedtuple(
        "PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Packed steps: data [sum(batch_sizes), *], batch_sizes (int64, on cpu) the sequences
    running at each step, sorted_indices/unsorted_indices the batch order (None when the
    batch was already longest first), as torch.nn.utils.rnn.PackedSequence.

    Example:
        >>> packed = kael.nn.utils.rnn.pack_sequence([kael.tensor([1.0, 2.0]),
        ...                                           kael.tensor([3.0])])
        >>> packed.data.tolist(), packed.batch_sizes.tolist()
        ([1.0, 3.0, 2.0], [2, 1])
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _kael.argsort(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The same packing with data moved or converted as Tensor.to."""
        return type(self)(self.data.to(*args, **kwargs), self.batch_sizes,
                          self.sorted_indices, self.unsorted_indices)

    @property
    def is_cuda(self):
        """Whether data lies on a cuda device."""
        return self.data.is_cuda


def _lengths(lengths):
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch [T, B, *] ([B, T, *] with batch_first) of sequences of the given
    lengths; unless enforce_sorted, the batch is sorted longest first and the order kept.

    Example:
        >>> x = kael.tensor([[1.0, 4.0], [2.0, 0.0], [3.0, 0.0]])  # [T=3, B=2]
        >>> kael.nn.utils.rnn.pack_padded_sequence(x, [3, 1]).data.tolist()
        [1.0, 4.0, 2.0, 3.0]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pack_padded_sequence: input must be a Tensor, not "
                        f"{type(input).__name__}")
    sizes = _lengths(lengths)
    if batch_first:
        input = input.transpose(0, 1)
    if len(sizes) != input.shape[1] or any(n < 1 or n > input.shape[0] for n in sizes):
        raise ValueError(f"pack_padded_sequence: {len(sizes)} lengths in 1..{input.shape[0]} "
                         f"needed for a batch of {input.shape[1]}, got {sizes}")
    sorted_indices = None
    if any(a < b for a, b in zip(sizes, sizes[1:])):
        if enforce_sorted:
            raise ValueError("pack_padded_sequence: lengths must be sorted longest first "
                             "(or pass enforce_sorted=False)")
        order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
        sorted_indices = _kael.tensor(order)
        input = input.index_select(1, sorted_indices.to(input.device))
        sizes = [sizes[i] for i in order]
    batch_sizes = [sum(1 for n in sizes if n > t) for t in range(sizes[0])]
    data = _kael.cat([input[t, :count] for t, count in enumerate(batch_sizes)], 0)
    return PackedSequence(data, _kael.tensor(batch_sizes), sorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """(padded [T, B, *] ([B, T, *] with batch_first), lengths) of a PackedSequence, in the
    original batch order.

    Example:
        >>> x = kael.tensor([[1.0, 4.0], [2.0, 0.0]])
        >>> padded, lengths = kael.nn.utils.rnn.pad_packed_sequence(
        ...     kael.nn.utils.rnn.pack_padded_sequence(x, [2, 1]))
        >>> padded.tolist(), lengths.tolist()
        ([[1.0, 4.0], [2.0, 0.0]], [2, 1])
    """
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"pad_packed_sequence: sequence must be a PackedSequence, not "
                        f"{type(sequence).__name__}")
    data, batch_sizes = sequence.data, [int(v) for v in sequence.batch_sizes.tolist()]
    batch, steps = batch_sizes[0], len(batch_sizes)
    length = steps if total_length is None else int(total_length)
    if length < steps:
        raise ValueError(f"pad_packed_sequence: total_length {length} is below the longest "
                         f"sequence's {steps}")
    rows, first = [], 0
    for count in batch_sizes:
        step = data[first:first + count]
        if count < batch:
            step = _kael.cat([step, _kael.full((batch - count, *data.shape[1:]), padding_value,
                                               dtype=data.dtype, device=data.device)], 0)
        rows.append(step)
        first += count
    for _ in range(length - steps):
        rows.append(_kael.full((batch, *data.shape[1:]), padding_value, dtype=data.dtype,
                               device=data.device))
    padded = _kael.stack(rows, 0)
    lengths = _kael.tensor([sum(1 for count in batch_sizes if count > b) for b in range(batch)])
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices.to(data.device))
        lengths = lengths.index_select(0, sequence.unsorted_indices)
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def _steps(sequence):
    """(padded [T, B, *] in the packed (sorted) order, lengths longest first) of a
    PackedSequence: the recurrent layers' view of it."""
    data, batch_sizes = sequence.data, [int(v) for v in sequence.batch_sizes.tolist()]
    batch, rows, first = batch_sizes[0], [], 0
    for count in batch_sizes:
        step = data[first:first + count]
        if count < batch:
            step = _kael.cat([step, _kael.zeros((batch - count, *data.shape[1:]),
                                                dtype=data.dtype, device=data.device)], 0)
        rows.append(step)
        first += count
    lengths = [sum(1 for count in batch_sizes if count > b) for b in range(batch)]
    return _kael.stack(rows, 0), lengths


def _packed_like(sequence, padded):
    """padded [T, B, *] (sorted order) packed as sequence is."""
    batch_sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    data = _kael.cat([padded[t, :count] for t, count in enumerate(batch_sizes)], 0)
    return PackedSequence(data, sequence.batch_sizes, sequence.sorted_indices,
                          sequence.unsorted_indices)


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """The sequences [L_i, *] padded to the longest into [T, B, *] ([B, T, *] with
    batch_first), as torch.nn.utils.rnn.pad_sequence.

    Example:
        >>> kael.nn.utils.rnn.pad_sequence([kael.tensor([1.0, 2.0]), kael.tensor([3.0])]).tolist()
        [[1.0, 3.0], [2.0, 0.0]]
    """
    sequences = list(sequences)
    if not sequences or not all(isinstance(s, Tensor) for s in sequences):
        raise TypeError("pad_sequence: sequences must be a non-empty list of Tensors")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        if s.shape[0] < longest:
            s = _kael.cat([s, _kael.full((longest - s.shape[0], *s.shape[1:]), padding_value,
                                         dtype=s.dtype, device=s.device)], 0)
        padded.append(s)
    return _kael.stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences [L_i, *] (longest first unless enforce_sorted is False).

    Example:
        >>> kael.nn.utils.rnn.pack_sequence([kael.tensor([1.0]), kael.tensor([2.0, 3.0])],
        ...                                 enforce_sorted=False).data.tolist()
        [2.0, 1.0, 3.0]
    """
    sequences = list(sequences)
    return pack_padded_sequence(pad_sequence(sequences), [s.shape[0] for s in sequences],
                                enforce_sorted=enforce_sorted)
