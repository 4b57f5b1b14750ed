"""torch.nn's recurrent layers with PyTorch's signatures, parameter names and return values:
RNN, LSTM (proj_size), GRU (layers, bidirectional, batch_first, dropout, initial states,
unbatched inputs) and RNNCell, LSTMCell, GRUCell. The computing is kael/nn_rnn.h's, in C++: one
matrix product for every step's input, then a per-step loop of the cell."""
from .._kael import Tensor, _nn
from .._kael import float32 as _float32


def _check_tensor(value, op, name):
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor or None, not {type(value).__name__}")


def _mode(mode, nonlinearity, op):
    """The C++ layer's mode: an RNN's carries its nonlinearity."""
    if mode != "RNN":
        return mode
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"{op}: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
    return "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"


class _RNNBase(_nn._RNNBase):
    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None,
                 nonlinearity="tanh"):
        super().__init__(_mode(self._mode, nonlinearity, "RNN"), input_size, hidden_size, num_layers, bool(bias),
                         bool(batch_first), float(dropout), bool(bidirectional), proj_size,
                         device)
        if dtype is not None and dtype != _float32:
            self.to(dtype)

    input_size = property(lambda self: self._options["input_size"], doc="Input features.")
    hidden_size = property(lambda self: self._options["hidden_size"], doc="Hidden features.")
    num_layers = property(lambda self: self._options["num_layers"], doc="Stacked layers.")
    bias = property(lambda self: self._options["bias"], doc="Whether it has biases.")
    batch_first = property(lambda self: self._options["batch_first"],
                           doc="Whether inputs are [B, T, ...].")
    dropout = property(lambda self: self._options["dropout"], doc="Dropout between layers.")
    bidirectional = property(lambda self: self._options["bidirectional"],
                             doc="Whether it also runs backwards in time.")
    proj_size = property(lambda self: self._options["proj_size"], doc="LSTM projection size.")

    def forward(self, input, hx=None):
        """(output, h_n), or for an LSTM (output, (h_n, c_n)), as PyTorch's; a PackedSequence
        input gives a PackedSequence output (kael.nn.utils.rnn)."""
        from .utils import rnn
        op = type(self).__name__
        if isinstance(input, rnn.PackedSequence):
            return self._forward_packed(input, hx)
        if not isinstance(input, Tensor):
            raise TypeError(f"{op}: input must be a Tensor, not {type(input).__name__}")
        if self._options["mode"] == "LSTM":
            if hx is None:
                state = []
            elif isinstance(hx, (tuple, list)) and len(hx) == 2:
                state = list(hx)
            else:
                raise TypeError("LSTM: hx must be a tuple (h_0, c_0) or None")
        else:
            state = [] if hx is None else [hx]
        for value in state:
            _check_tensor(value, op, "hx")
        output, final = self._run(input, state)
        if self._options["mode"] == "LSTM":
            return output, (final[0], final[1])
        return output, final[0]

    def _forward_packed(self, packed, hx):
        from .utils import rnn
        padded, lengths = rnn._steps(packed)
        lstm = self._options["mode"] == "LSTM"
        state = [] if hx is None else (list(hx) if lstm else [hx])
        if packed.sorted_indices is not None:  # the states follow the batch's sorted order
            order = packed.sorted_indices.to(padded.device)
            state = [s.index_select(1, order) for s in state]
        first = self._options["batch_first"]
        output, final = self._run(padded.transpose(0, 1) if first else padded, state, lengths)
        output = rnn._packed_like(packed, output.transpose(0, 1) if first else output)
        if packed.unsorted_indices is not None:
            back = packed.unsorted_indices.to(padded.device)
            final = [s.index_select(1, back) for s in final]
        return (output, (final[0], final[1])) if lstm else (output, final[0])


class RNN(_RNNBase):
    """An Elman RNN, h_t = tanh(x_t W_ih^T + b_ih + h_(t-1) W_hh^T + b_hh), as torch.nn.RNN
    (nonlinearity "tanh" or "relu").

    Example:
        >>> rnn = kael.nn.RNN(10, 20, num_layers=2)
        >>> output, h = rnn(kael.randn(5, 3, 10))
        >>> output.shape, h.shape
        ((5, 3, 20), (2, 3, 20))
    """
    _mode = "RNN"

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype, nonlinearity)


class LSTM(_RNNBase):
    """A long short-term memory layer stack, as torch.nn.LSTM (gates i, f, g, o; proj_size
    projects h).

    Example:
        >>> lstm = kael.nn.LSTM(10, 20, batch_first=True, bidirectional=True)
        >>> output, (h, c) = lstm(kael.randn(3, 5, 10))
        >>> output.shape, h.shape, c.shape
        ((3, 5, 40), (2, 3, 20), (2, 3, 20))
    """
    _mode = "LSTM"


class GRU(_RNNBase):
    """A gated recurrent unit layer stack, as torch.nn.GRU (gates r, z, n).

    Example:
        >>> output, h = kael.nn.GRU(8, 16)(kael.randn(4, 2, 8))
        >>> output.shape, h.shape
        ((4, 2, 16), (1, 2, 16))
    """
    _mode = "GRU"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


class _CellBase(_nn._RNNCellBase):
    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None,
                 nonlinearity="tanh"):
        super().__init__(_mode(self._mode, nonlinearity, "RNNCell"), input_size, hidden_size, bool(bias), device)
        self.bias = bool(bias)
        if dtype is not None and dtype != _float32:
            self.to(dtype)

    def forward(self, input, hx=None):
        """The next hidden state (for an LSTMCell, the pair (h', c'))."""
        op = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{op}: input must be a Tensor, not {type(input).__name__}")
        if self._mode == "LSTM":
            state = [] if hx is None else list(hx)
        else:
            state = [] if hx is None else [hx]
        for value in state:
            _check_tensor(value, op, "hx")
        result = self._step(input, state)
        return (result[0], result[1]) if self._mode == "LSTM" else result[0]


class RNNCell(_CellBase):
    """One step of an Elman RNN, as torch.nn.RNNCell.

    Example:
        >>> kael.nn.RNNCell(4, 8)(kael.randn(2, 4)).shape
        (2, 8)
    """
    _mode = "RNN"

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, device, dtype, nonlinearity)


class LSTMCell(_CellBase):
    """One LSTM step, as torch.nn.LSTMCell: returns (h', c').

    Example:
        >>> h, c = kael.nn.LSTMCell(4, 8)(kael.randn(2, 4))
        >>> h.shape, c.shape
        ((2, 8), (2, 8))
    """
    _mode = "LSTM"


class GRUCell(_CellBase):
    """One GRU step, as torch.nn.GRUCell.

    Example:
        >>> kael.nn.GRUCell(4, 8)(kael.randn(2, 4)).shape
        (2, 8)
    """
    _mode = "GRU"
