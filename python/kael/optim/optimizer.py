"""kael.optim.Optimizer: parameter groups, per-parameter state and state dicts, as in PyTorch.

Subclasses write step(); SGD, Adam and AdamW hand each group to a C++ step function.
"""
from collections.abc import MutableMapping

from .._kael import Tensor
from ..autograd import enable_grad


class ParamState(MutableMapping):
    """Each parameter's state dict, found by the tensor itself (its storage identity), whichever
    Python object refers to it; a missing parameter gets an empty dict, as PyTorch's defaultdict.

    Example:
        >>> p = kael.zeros(2, requires_grad=True)
        >>> state = kael.optim.optimizer.ParamState()
        >>> state[p]["step"] = 1.0
        >>> state[p.detach().requires_grad_(False)] is state[p]  # another tensor: another entry
        False
        >>> len(state)
        2
    """

    def __init__(self):
        self._entries = {}  # hash(tensor), which is its TensorImpl's address -> (tensor, dict)

    @staticmethod
    def _key(parameter):
        if not isinstance(parameter, Tensor):
            raise TypeError(f"optimizer state is keyed by tensors, got {type(parameter).__name__}")
        return hash(parameter)

    def __getitem__(self, parameter):
        key = self._key(parameter)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = (parameter, {})
        return entry[1]

    def __setitem__(self, parameter, value):
        self._entries[self._key(parameter)] = (parameter, value)

    def __delitem__(self, parameter):
        del self._entries[self._key(parameter)]

    def __contains__(self, parameter):
        return isinstance(parameter, Tensor) and hash(parameter) in self._entries

    def __iter__(self):
        return (parameter for parameter, _ in list(self._entries.values()))

    def __len__(self):
        return len(self._entries)

    def __repr__(self):
        return f"ParamState({len(self)} parameters)"


def _copy_for(parameter, value):
    """A loaded state value as the parameter needs it: tensors copied onto its device (floating
    ones in its dtype) so that stepping never writes into the loaded state dict."""
    if isinstance(value, Tensor):
        moved = value.to(parameter.device)
        if value.dtype.is_floating_point and parameter.dtype.is_floating_point \
                and value.dtype != parameter.dtype:
            moved = moved.to(parameter.dtype)
        return moved.clone() if hash(moved) == hash(value) else moved
    if isinstance(value, dict):
        return {key: _copy_for(parameter, item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copy_for(parameter, item) for item in value)
    return value


class Optimizer:
    """Base class of optimizers: param_groups (a list of dicts, each with "params" and its
    options), defaults, state (a dict per parameter), zero_grad, state_dict, load_state_dict.

    params is an iterable of tensors or of dicts ({"params": [...], "lr": 0.01, ...}); options a
    group leaves out are taken from defaults. A subclass calls super().__init__(params, defaults)
    and writes step(closure=None).

    Example:
        >>> class PlainSGD(kael.optim.Optimizer):
        ...     def __init__(self, params, lr=0.1):
        ...         super().__init__(params, dict(lr=lr))
        ...     def step(self, closure=None):
        ...         for group in self.param_groups:
        ...             for p in group["params"]:
        ...                 if p.grad is not None:
        ...                     self.state[p]["steps"] = self.state[p].get("steps", 0) + 1
        ...                     with kael.no_grad():
        ...                         p.copy_(p - group["lr"] * p.grad)
        >>> w = kael.ones(2, requires_grad=True)
        >>> optimizer = PlainSGD([w], lr=0.5)
        >>> (w * w).sum().backward()
        >>> optimizer.step()
        >>> w.tolist()
        [0.0, 0.0]
    """

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state = ParamState()
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got a Tensor")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Adds a group (a dict with "params" and options; missing options from defaults).

        A parameter already in another group is a ValueError, as in PyTorch.

        Example:
            >>> a, b = kael.ones(2, requires_grad=True), kael.ones(3, requires_grad=True)
            >>> optimizer = kael.optim.SGD([a], lr=0.1)
            >>> optimizer.add_param_group({"params": [b], "lr": 0.01})
            >>> [group["lr"] for group in optimizer.param_groups]
            [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs")
        else:
            params = list(params)
        for parameter in params:
            if not isinstance(parameter, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{type(parameter).__name__}")
            if not parameter.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        param_group["params"] = params
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        seen = {hash(p) for group in self.param_groups for p in group["params"]}
        if any(hash(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Drops every parameter's gradient (set_to_none=True, PyTorch 2.x's default) or fills
        it with zeros in place (set_to_none=False).

        Example:
            >>> w = kael.ones(2, requires_grad=True)
            >>> optimizer = kael.optim.SGD([w], lr=0.1)
            >>> w.sum().backward()
            >>> optimizer.zero_grad()
            >>> w.grad is None
            True
        """
        for group in self.param_groups:
            for parameter in group["params"]:
                if set_to_none:
                    parameter.grad = None
                else:
                    parameter.zero_grad()

    def step(self, closure=None):
        """One optimization step; subclasses implement it (closure re-evaluates the loss).

        Example:
            >>> optimizer = kael.optim.SGD([kael.ones(1, requires_grad=True)], lr=0.1)
            >>> optimizer.step()  # no gradient yet: nothing changes
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    @staticmethod
    def _loss_of(closure):
        """The closure's loss, computed with gradients enabled (None without a closure)."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def state_dict(self):
        """The optimizer's state in PyTorch's layout: {"state": {index: {...}}, "param_groups":
        [{options..., "params": [indices]}]}, parameters numbered over the groups in order.
        The state holds the optimizer's own tensors (not copies), on the parameters' devices.

        Example:
            >>> w = kael.ones(2, requires_grad=True)
            >>> optimizer = kael.optim.Adam([w], lr=0.1)
            >>> w.sum().backward()
            >>> optimizer.step()
            >>> sorted(optimizer.state_dict()["state"][0])
            ['exp_avg', 'exp_avg_sq', 'step']
        """
        index, groups = {}, []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            packed["params"] = []
            for parameter in group["params"]:
                position = index.setdefault(hash(parameter), len(index))
                packed["params"].append(position)
            groups.append(packed)
        state = {index[hash(parameter)]: value for parameter, value in self.state.items()
                 if hash(parameter) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Loads a state_dict(): group options are replaced, state tensors copied onto each
        parameter's device (floating ones in its dtype). A different number of groups or of
        parameters in a group is a ValueError.

        Example:
            >>> w = kael.ones(2, requires_grad=True)
            >>> optimizer = kael.optim.SGD([w], lr=0.1, momentum=0.9)
            >>> saved = optimizer.state_dict()
            >>> optimizer.param_groups[0]["lr"] = 5.0
            >>> optimizer.load_state_dict(saved)
            >>> optimizer.param_groups[0]["lr"]
            0.1
        """
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, saved_groups):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        by_index = {}
        for group, saved in zip(self.param_groups, saved_groups):
            by_index.update(zip(saved["params"], group["params"]))
        state = ParamState()
        for index, value in state_dict["state"].items():
            parameter = by_index.get(int(index))  # JSON-like files may give the keys as text
            if parameter is None:
                raise ValueError(f"loaded state dict has state for parameter {index}, which "
                                 "no parameter group lists")
            state[parameter] = _copy_for(parameter, value)
        groups = []
        for group, saved in zip(self.param_groups, saved_groups):
            loaded = {key: _copy_for(group["params"][0], value) if isinstance(value, Tensor)
                      else value for key, value in saved.items() if key != "params"}
            loaded["params"] = group["params"]
            groups.append(loaded)
        self.state = state
        self.param_groups = groups

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for number, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {number}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines + [")"])
