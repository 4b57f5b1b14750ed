"""Disagreements the fuzzer finds that other parts of issue 9 are fixing in their own branches.
The generator keeps producing them; a failing case that matches one of these is counted and
reported at the end instead of failing the run.

KNOWN_UNTIL_ISSUE_9_MERGE is emptied by whoever merges those branches: from then on every one
of these fails the fuzzer again."""
import numpy as np

from cases_elementwise import has_internal_overlap
from fuzz_case import Alias

KNOWN_UNTIL_ISSUE_9_MERGE = {}
# Reproduced by this fuzzer until their branches merged, fixed on main now and so no longer
# skipped: in-place results that cannot be cast (int64 /= 2), int64 ** negative int64,
# sum(dim=(0, 0)), sum(dim=(-4,)) of a 3-d tensor, negative indices of gather/index_select.


def _is_overlapping_write(case):
    """An in-place write whose target overlaps itself (expanded) or one of its inputs."""
    if not case.op.startswith(("in_place", "setitem", "masked_fill_", "scatter_add_")):
        return False
    arrays = case.numpy_inputs()
    target = arrays["a"]
    aliases = [name for name, spec in case.inputs.items() if isinstance(spec, Alias)]
    return has_internal_overlap(target) or any(
        np.shares_memory(target, arrays[name]) for name in aliases)


# Not bugs: cases the numpy reference cannot judge. numpy recomputes the strides of an empty
# view (reshape, expand_dims), so it cannot tell whether an empty expanded write target has
# internal overlap, which PyTorch's rule (and kael's) decides from the strides alone.
# Nor can anyone judge a write through an as_strided view whose elements share memory without a
# stride 0 (sizes [2, 3], strides [1, 1]): PyTorch calls that overlap "maybe" and leaves the
# result to the order of the writes.
AMBIGUOUS = {"empty_expanded_write", "self_overlapping_write"}


def _aliases_itself(view):
    if view.size == 0:
        return False
    offsets = sum(np.indices(view.shape, sparse=True)[d] * view.strides[d]
                  for d in range(view.ndim)) if view.ndim else np.zeros(1)
    return np.unique(np.asarray(offsets)).size < view.size


def _is_empty_expanded_write(case):
    # numpy's strides of an empty array need not be kael's, whatever steps made it.
    if "a" not in case.inputs:
        return False
    target = case.numpy_inputs()["a"]
    return case.op.startswith(("in_place", "setitem", "masked_fill_", "scatter_add_")) and \
        target.size == 0 and (has_internal_overlap(target) or any(
            step[0] in ("expand", "as_strided") for step in case.inputs["a"].steps))


def known_failure(case, expected):
    """The key of KNOWN_UNTIL_ISSUE_9_MERGE this failing case belongs to, or None."""
    if _is_empty_expanded_write(case):
        return "empty_expanded_write"
    if case.op.startswith(("in_place", "setitem", "masked_fill_", "scatter_add_")) and \
            _aliases_itself(case.numpy_inputs()["a"]):
        return "self_overlapping_write"
    checks = {"overlapping_writes": _is_overlapping_write(case)}
    for key, matches in checks.items():
        if matches and key in KNOWN_UNTIL_ISSUE_9_MERGE:
            return key
    return None
