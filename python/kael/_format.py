"""repr of tensors: kael.tensor([[1., 2.]], device='cuda:0'), numbers aligned like PyTorch's."""
import math

_SUMMARY_THRESHOLD = 1000  # more elements than this: show 3 at each end of every dimension
_EDGE_ITEMS = 3


def _summary_index(size):
    if size <= 2 * _EDGE_ITEMS:
        return None
    return list(range(_EDGE_ITEMS)) + list(range(size - _EDGE_ITEMS, size))


def _shown_values(tensor):
    """Nested lists of the values shown, and per dimension whether it is summarized."""
    from . import _kael
    summarized = []
    shown = tensor.detach()
    if tensor.numel() > _SUMMARY_THRESHOLD:
        for dim, size in enumerate(tensor.shape):
            index = _summary_index(size)
            summarized.append(index is not None)
            if index is not None:
                positions = _kael.tensor(index, device=tensor.device)
                shown = shown.index_select(dim, positions)
    else:
        summarized = [False] * tensor.ndim
    return shown.tolist(), summarized


def _flatten(values):
    if isinstance(values, list):
        for item in values:
            yield from _flatten(item)
    else:
        yield values


def _float_formatter(values):
    finite = [abs(v) for v in values if math.isfinite(v)]
    integral = all(v == int(v) for v in finite) and (not finite or max(finite) < 1e8)
    nonzero = [v for v in finite if v != 0]
    scientific = bool(nonzero) and (max(nonzero) >= 1e8 or min(nonzero) < 1e-4)

    def format_float(v):
        if not math.isfinite(v):
            return str(v)
        if integral:
            return f"{v:.0f}."
        return f"{v:.4e}" if scientific else f"{v:.4f}"
    return format_float


def _element_formatter(tensor, values):
    if not tensor.dtype.is_floating_point:
        return str
    return _float_formatter(values)


def _nested(values, depth, ndim, indent, summarized, text):
    if depth == ndim:
        return text(values)
    items = [_nested(item, depth + 1, ndim, indent, summarized, text) for item in values]
    if summarized[depth]:
        items.insert(_EDGE_ITEMS, "...")
    if depth == ndim - 1:
        return "[" + ", ".join(items) + "]"
    separator = "," + "\n" * (ndim - depth - 1) + " " * (indent + depth + 1)
    return "[" + separator.join(items) + "]"


def format_tensor(tensor):
    prefix = "kael.tensor("
    values, summarized = _shown_values(tensor)
    extras = []
    if tensor.numel() == 0 and tensor.ndim != 1:
        body = "[]"
        extras.append(f"size={tuple(tensor.shape)}")
    else:
        flat = list(_flatten(values))
        formatter = _element_formatter(tensor, flat)
        width = max((len(formatter(v)) for v in flat), default=0)

        def text(value):
            return formatter(value).rjust(width)
        body = _nested(values, 0, tensor.ndim, len(prefix), summarized, text)
    if tensor.device.type != "cpu":
        extras.append(f"device='{tensor.device}'")
    if tensor.dtype.name != "f32":
        extras.append(f"dtype={tensor.dtype!r}")
    if tensor.grad_fn is not None:
        extras.append(f"grad_fn=<{tensor.grad_fn}>")
    elif tensor.requires_grad:
        extras.append("requires_grad=True")
    return prefix + body + "".join(", " + extra for extra in extras) + ")"
