"""repr of tensors: kael.tensor([[1., 2.]], device='cuda:0'), numbers aligned like PyTorch's."""
import math

# PyTorch's defaults: more than threshold elements show edgeitems at each end of every
# dimension; rows wrap at linewidth characters; precision digits after the point.
_OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
            "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Sets how tensors print, as torch.set_printoptions.

    Args:
        precision (int): digits after the decimal point (4).
        threshold (int): more elements than this are summarized with "..." (1000).
        edgeitems (int): elements shown at each end of a summarized dimension (3).
        linewidth (int): characters per line before a row wraps (80).
        profile (str): "default", "short" (precision 2, threshold 1000, edgeitems 2) or "full"
            (nothing summarized).
        sci_mode (bool or None): force scientific notation on (True) or off (False); None
            chooses as PyTorch does.

    Example:
        >>> kael.set_printoptions(precision=2)
        >>> kael.tensor([1.23456])
        kael.tensor([1.23])
        >>> kael.set_printoptions(profile="default")
    """
    profiles = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
                "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
                "full": dict(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80)}
    if profile is not None:
        if profile not in profiles:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(profiles)}")
        _OPTIONS.update(profiles[profile], sci_mode=None)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            _OPTIONS[name] = value
    _OPTIONS["sci_mode"] = sci_mode


def _summary_index(size):
    edge = _OPTIONS["edgeitems"]
    if size <= 2 * edge:
        return None
    return list(range(edge)) + list(range(size - edge, size))


def _edges(tensor, dim):
    """The first and last edgeitems along every long dim from dim on, through narrowed views
    copied only once small: selecting dim after dim would copy the other dims whole (an
    expanded 2^31 x 2^31 view)."""
    from . import _kael
    if dim == tensor.ndim:
        return tensor.contiguous()
    size, edge = tensor.shape[dim], _OPTIONS["edgeitems"]
    if _summary_index(size) is None:
        return _edges(tensor, dim + 1)
    return _kael.cat([_edges(tensor.narrow(dim, 0, edge), dim + 1),
                      _edges(tensor.narrow(dim, size - edge, edge), dim + 1)], dim)


def _shown_values(tensor):
    """Nested lists of the values shown, and per dimension whether it is summarized."""
    shown = tensor.detach()
    if tensor.numel() > _OPTIONS["threshold"]:
        summarized = [_summary_index(size) is not None for size in tensor.shape]
        shown = _edges(shown, 0)
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
    scientific = bool(nonzero) and (max(nonzero) / min(nonzero) > 1000.0 or
                                    max(nonzero) > 1e8 or min(nonzero) < 1e-4)
    if _OPTIONS["sci_mode"] is not None:
        scientific = _OPTIONS["sci_mode"]
    digits = _OPTIONS["precision"]

    def format_float(v):
        if not math.isfinite(v):
            return str(v)
        if scientific:
            return f"{v:.{digits}e}"
        if integral:
            return f"{v:.0f}."
        return f"{v:.{digits}f}"
    return format_float


def _element_formatter(tensor, values):
    if not tensor.dtype.is_floating_point:
        return str
    return _float_formatter(values)


def _nested(values, depth, ndim, indent, summarized, text):
    if depth == ndim:
        return text(values)
    items = [_nested(item, depth + 1, ndim, indent, summarized, text) for item in values]
    if depth == ndim - 1:  # a row: wrapped to the line width, as PyTorch's _vector_str
        if summarized[depth]:
            items.insert(_OPTIONS["edgeitems"], " ...")
        element = max((len(item) for item in items), default=0) + 2
        # Breaks where PyTorch's repr breaks: its indent is len("tensor("), 5 less than ours.
        per_line = max(1, (_OPTIONS["linewidth"] - len("tensor(") - depth) // max(element, 1))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + depth + 1)).join(lines) + "]"
    if summarized[depth]:
        items.insert(_OPTIONS["edgeitems"], "...")
    separator = "," + "\n" * (ndim - depth - 1) + " " * (indent + depth + 1)
    return "[" + separator.join(items) + "]"


def format_tensor_str(tensor):
    """str(tensor): as PyTorch prints it, "tensor(...)" (repr keeps kael's name)."""
    return format_tensor(tensor, "tensor(")


def format_tensor(tensor, prefix="kael.tensor("):
    extras = []
    if tensor.numel() == 0:  # nothing to show: no nested lists of empty rows, whatever the dims
        body = "[]"
        if tensor.ndim != 1:
            extras.append(f"size={tuple(tensor.shape)}")
    else:
        values, summarized = _shown_values(tensor)
        flat = list(_flatten(values))
        formatter = _element_formatter(tensor, flat)
        width = max((len(formatter(v)) for v in flat), default=0)

        def text(value):
            return formatter(value).rjust(width)
        body = _nested(values, 0, tensor.ndim, len(prefix), summarized, text)
    if tensor.device.type != "cpu":
        extras.append(f"device='{tensor.device}'")
    if tensor.dtype.name not in ("f32", "i64", "bool"):  # the dtypes kael.tensor infers
        extras.append(f"dtype={tensor.dtype!r}")
    if tensor.grad_fn is not None:
        extras.append(f"grad_fn=<{tensor.grad_fn}>")
    elif tensor.requires_grad:
        extras.append("requires_grad=True")
    return prefix + body + "".join(", " + extra for extra in extras) + ")"
