"""One fuzz case: tensors (TensorSpec or aliases of another's base), Python scalars, a statement
that computes `out` with kael, and its numpy reference. It runs on any device, and its repr is a
self-contained Python reproducer."""
import os

import numpy as np

from fuzz_reference import Expect, RaiseExpected
from fuzz_tensors import TensorSpec, apply_kael_steps, apply_numpy_step, step_code

HERE = os.path.dirname(os.path.abspath(__file__))


class Alias:
    """A second view of another tensor's base (the two may overlap)."""

    def __init__(self, of, steps):
        self.of = of
        self.steps = tuple(steps)

    def code(self, name):
        return f"{name} = {self.of}_base{''.join(step_code(s) for s in self.steps)}"


class Tol:
    """Tolerances by dtype: rtol, and atol either fixed or a multiple of a scale the reference
    gives (sums of magnitudes for reductions and products)."""

    def __init__(self, f32=(1e-6, 0.0), f64=(1e-13, 0.0)):
        self.by_dtype = {"float32": f32, "float64": f64}


EXACT = Tol()
TRANSCENDENTAL = Tol(f32=(1e-5, 1e-6), f64=(1e-12, 1e-14))
ACCUMULATED = Tol(f32=(1e-5, 1e-5), f64=(1e-12, 1e-12))


class Loose:
    """An expected array with the positions to compare (the others only cpu against cuda:0)."""

    def __init__(self, array, care, scale=None):
        self.array, self.care, self.scale = array, care, scale

    def __repr__(self):
        return f"{self.array!r} (compared where {self.care!r})"


class Case:
    def __init__(self, op, inputs, stmt, reference, tol=EXACT, known=None):
        self.op = op
        self.inputs = inputs  # {name: TensorSpec | Alias | Python scalar}
        self.stmt = stmt
        self.reference = reference  # f(arrays: {name: ndarray}) -> list of arrays | Loose
        self.tol = tol
        self.known = known  # set to the KNOWN_UNTIL_ISSUE_9_MERGE key this case hits, if any

    def kael_namespace(self, kael, device):
        other = "cpu" if device != "cpu" else ("cuda:0" if kael.cuda_is_available() else "cpu")
        namespace = {"kael": kael, "np": np, "nan": float("nan"), "inf": float("inf"),
                     "DEVICE": device, "OTHER_DEVICE": other}
        for name, spec in self.inputs.items():
            if isinstance(spec, TensorSpec):
                namespace[name + "_base"], namespace[name] = spec.kael_view(kael, device)
            elif isinstance(spec, Alias):
                namespace[name] = apply_kael_steps(namespace[spec.of + "_base"], spec.steps)
            else:
                namespace[name] = spec
        return namespace

    def run_kael(self, kael, device):
        """The outputs as numpy arrays, or the exception kael raised."""
        namespace = self.kael_namespace(kael, device)
        try:
            exec(self.stmt, namespace)
            out = namespace["out"]
            outputs = out if isinstance(out, (tuple, list)) else [out]
            # Inside the try: a device reports a bad index when the result is read (numpy()).
            results = [o.numpy() if isinstance(o, kael.Tensor) else np.asarray(o)
                       for o in outputs]
            kael.synchronize(device)
        except Exception as error:  # noqa: BLE001  (every typed error is judged by the caller)
            # An error at the call may leave the device's deferred index error of the same
            # call pending: the first one is the case's; the rest must not leak into the next.
            try:
                kael.synchronize(device)
            except IndexError:
                pass
            return error
        return results

    def numpy_inputs(self):
        arrays = {}
        for name, spec in self.inputs.items():
            if isinstance(spec, TensorSpec):
                base = spec.base.copy()
                arrays[name + "_base"] = base
                arrays[name] = spec.numpy_view(base)
            elif isinstance(spec, Alias):
                base = arrays[spec.of + "_base"]
                array = base
                for step in spec.steps:
                    array = apply_numpy_step(array, base.reshape(-1), step)
                arrays[name] = array
            else:
                arrays[name] = spec
        return arrays

    def run_reference(self):
        try:
            with np.errstate(all="ignore"):
                result = self.reference(self.numpy_inputs())
        except RaiseExpected as expected:
            return Expect(str(expected))
        return result if isinstance(result, (tuple, list)) else [result]

    def code(self, device="cpu"):
        lines = ["import sys", f"sys.path.insert(0, {HERE!r})  # fuzz_tensors",
                 "import numpy as np", "import kael", "import fuzz_tensors",
                 "from numpy import nan, inf",
                 f"DEVICE = {device!r}",
                 f"OTHER_DEVICE = {'cpu' if device != 'cpu' else 'cuda:0'!r}"]
        for name, spec in self.inputs.items():
            if isinstance(spec, (TensorSpec, Alias)):
                lines.append(spec.code(name))
            else:
                lines.append(f"{name} = {spec!r}")
        lines.append(self.stmt)
        lines.append("print(out)")
        return "\n".join(lines)

    def __repr__(self):
        return f"\n# op {self.op}\n{self.code()}\n"
