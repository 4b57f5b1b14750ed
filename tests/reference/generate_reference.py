#!/usr/bin/python3
"""Reference values for kael's ops, computed independently with numpy.

Every case names an op, its parameters and its inputs. An input is a base array plus a view
recipe ("transpose d0 d1", "permute order", "slice dim start stop step", "expand shape") that the
C++ test applies with kael views, so kael sees strided inputs. The expected values are the op's
outputs and the gradients of sum(output * weight), for a fixed random weight, with respect to
every floating base array. Gradients are written out by hand (reference_cases.py), not taken
from an autograd. f32 inputs are f32 values; the expected values are computed in f64.

Run with Debian's interpreter, which has python3-numpy:
    /usr/bin/python3 tests/reference/generate_reference.py [OUTPUT]
    /usr/bin/python3 tests/reference/generate_reference.py --check FILE

--check regenerates in memory and compares with the file: floats within a few ULP (numpy's SIMD
functions and BLAS differ in the last bit between CPUs), everything else exactly.
Exit status: 0, 1 when --check finds a difference, 77 when numpy is missing (CTest: skipped).
"""

import argparse
import json
import math
import pathlib
import sys

SKIPPED = 77
SEED = 20240611
HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_OUTPUT = HERE / "reference_data.json"
FLOATS = ("f32", "f64")

try:
    import numpy as np
except ImportError:
    np = None


def as_dtype(values, dtype):
    """The values as kael holds them, in the numpy type the reference computes with."""
    if dtype == "f32":
        return np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float64)
    if dtype == "f64":
        return np.asarray(values, dtype=np.float64)
    if dtype == "i64":
        return np.asarray(values, dtype=np.int64)
    if dtype == "bool":
        return np.asarray(values, dtype=bool)
    raise ValueError(dtype)


def slicer(ndim, dim, start, stop, step):
    index = [slice(None)] * ndim
    index[dim] = slice(start, stop, step)
    return tuple(index)


def apply_view(base, recipe):
    """The viewed array and the shape before each step."""
    array, shapes = base, []
    for step in recipe:
        shapes.append(array.shape)
        if step[0] == "transpose":
            array = np.swapaxes(array, step[1], step[2])
        elif step[0] == "permute":
            array = np.transpose(array, step[1])
        elif step[0] == "slice":
            array = array[slicer(array.ndim, *step[1:])]
        elif step[0] == "expand":
            array = np.broadcast_to(array, step[1])
        else:
            raise ValueError(step)
    return array, shapes


def sum_to(grad, shape):
    """A gradient in a broadcast shape summed down to shape."""
    grad = np.asarray(grad, dtype=np.float64)
    if grad.ndim < len(shape):
        grad = grad.reshape((1,) * (len(shape) - grad.ndim) + grad.shape)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for dim, size in enumerate(shape):
        if size == 1 and grad.shape[dim] != 1:
            grad = grad.sum(axis=dim, keepdims=True)
    return grad


def grad_to_base(grad, recipe, shapes):
    for step, shape in zip(reversed(recipe), reversed(shapes)):
        if step[0] == "transpose":
            grad = np.swapaxes(grad, step[1], step[2])
        elif step[0] == "permute":
            grad = np.transpose(grad, np.argsort(step[1]))
        elif step[0] == "slice":
            full = np.zeros(shape)
            full[slicer(len(shape), *step[1:])] = grad
            grad = full
        elif step[0] == "expand":
            grad = sum_to(grad, shape)
    return grad


def encode(array, dtype):
    values = np.asarray(array).reshape(-1)
    if dtype in FLOATS:
        flat = [float(x) if math.isfinite(x) else ("nan" if math.isnan(x) else
                                                   ("inf" if x > 0 else "-inf"))
                for x in values.astype(np.float64)]
    elif dtype == "i64":
        flat = [int(x) for x in values.astype(np.int64)]
    else:
        flat = [bool(x) for x in values]
    return {"dtype": dtype, "shape": list(np.shape(array)), "values": flat}


class Input:
    def __init__(self, base, dtype, view=(), grad=None):
        self.dtype = dtype
        self.base = as_dtype(base, dtype)
        self.view = [list(step) for step in view]
        self.grad = dtype in FLOATS if grad is None else grad
        self.array, self.shapes = apply_view(self.base, self.view)


class Cases:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.cases = []
        self.names = set()

    def normal(self, *shape):
        return self.rng.standard_normal(shape)

    def away0(self, *shape, margin=0.2):
        x = self.normal(*shape)
        return np.where(x < 0, -1.0, 1.0) * (margin + np.abs(x))

    def positive(self, *shape, low=0.3, high=2.3):
        return low + (high - low) * self.rng.random(shape)

    def distinct(self, *shape):
        """Values without ties, well apart, in random order."""
        count = int(np.prod(shape))
        return (self.rng.permutation(count) * 0.37 - count * 0.15
                + 0.05 * self.rng.random(count)).reshape(shape)

    def add(self, name, op, inputs, forward, backward=None, params=None):
        if name in self.names:
            raise ValueError("duplicate case " + name)
        self.names.add(name)
        arrays = [i.array for i in inputs]
        with np.errstate(all="ignore"):
            outputs = forward(*arrays)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        floats = [i.dtype for i in inputs if i.dtype in FLOATS]
        float_dtype = "f64" if "f64" in floats else "f32"
        encoded = []
        for out in outputs:
            out = np.asarray(out)
            kind = {"b": "bool", "i": "i64", "f": float_dtype}[out.dtype.kind]
            encoded.append(encode(out, kind))
        case = {"name": name, "op": op, "params": params or {},
                "inputs": [dict(encode(i.base, i.dtype), view=i.view, grad=i.grad)
                           for i in inputs],
                "outputs": encoded, "weight": None, "grads": [None] * len(inputs)}
        if backward is not None and any(i.grad for i in inputs):
            first = next(k for k, out in enumerate(encoded) if out["dtype"] in FLOATS)
            shape = np.shape(outputs[first])
            weight = as_dtype(self.normal(*shape), float_dtype).reshape(shape)
            case["weight"] = encode(weight, float_dtype)
            with np.errstate(all="ignore"):
                grads = backward(weight, *arrays)
            for k, (i, grad) in enumerate(zip(inputs, grads)):
                if i.grad:
                    grad = np.broadcast_to(sum_to(grad, i.array.shape), i.array.shape)
                    grad = grad_to_base(grad, i.view, i.shapes)
                    case["grads"][k] = encode(grad, i.dtype)
        self.cases.append(case)


def generate():
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(HERE))
    import reference_cases  # pylint: disable=import-outside-toplevel

    cases = Cases(SEED)
    reference_cases.build(cases, Input)
    header = {"generator": "tests/reference/generate_reference.py (cases in reference_cases.py)",
              "command": "/usr/bin/python3 tests/reference/generate_reference.py",
              "numpy": np.__version__, "seed": SEED,
              "gradients": "of sum(outputs[first floating] * weight) with respect to each "
                           "input's base array, before its view recipe"}
    return {"header": header, "cases": cases.cases}


def dump(document):
    lines = ['{"header": ' + json.dumps(document["header"], allow_nan=False) + ',', '"cases": [']
    cases = [json.dumps(case, allow_nan=False, separators=(",", ":"))
             for case in document["cases"]]
    lines.append(",\n".join(cases))
    lines.append("]}")
    return "\n".join(lines) + "\n"


# Floats may differ by this many units in the last place of their dtype, counted at the largest
# finite magnitude of their array: numpy's SIMD exp, sin, tanh (up to 4 ULP apart between AVX2
# and AVX-512 builds), BLAS matmul and summation order differ between CPUs, and a difference in
# the last bit of a large intermediate stays absolute when a gradient like 1 - tanh(x)**2 cancels.
ULPS = 16
EPSILON = {"f32": 2.0**-23, "f64": 2.0**-52}


def float_array_differences(expected, actual, dtype, where):
    """The values of two float arrays within ULPS; "nan", "inf" and "-inf" exactly."""
    if len(expected) != len(actual):
        return [where + ": lengths differ (%d vs %d)" % (len(expected), len(actual))]
    scale = max((abs(x) for x in expected + actual if not isinstance(x, str)), default=0.0)
    allowed = ULPS * EPSILON[dtype] * scale
    found = []
    for k, (e, a) in enumerate(zip(expected, actual)):
        if isinstance(e, str) or isinstance(a, str):
            same = e == a
        else:
            same = abs(e - a) <= allowed
        if not same:
            found.append("%s/%d: %r in the file, %r regenerated" % (where, k, e, a))
    return found


def differences(expected, actual, where=""):
    """Paths at which two documents differ: the values of float arrays within a few ULP,
    everything else exactly."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.keys() != actual.keys():
            return [where + ": keys differ"]
        dtype = expected.get("dtype")
        if dtype in FLOATS and "values" in expected and dtype == actual.get("dtype"):
            rest = [d for key in expected if key != "values"
                    for d in differences(expected[key], actual[key], where + "/" + key)]
            return rest + float_array_differences(expected["values"], actual["values"], dtype,
                                                  where + "/values")
        return [d for key in expected
                for d in differences(expected[key], actual[key], where + "/" + key)]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [where + ": lengths differ (%d vs %d)" % (len(expected), len(actual))]
        return [d for k, (e, a) in enumerate(zip(expected, actual))
                for d in differences(e, a, where + "/" + str(k))]
    if type(expected) is not type(actual) or expected != actual:
        return ["%s: %r in the file, %r regenerated" % (where, expected, actual)]
    return []


def check(path, document=None):
    """0 when the file at path is what generate() produces (or document, when given)."""
    committed = json.loads(pathlib.Path(path).read_text())
    fresh = json.loads(dump(document if document is not None else generate()))
    committed["header"].pop("numpy", None)
    fresh["header"].pop("numpy", None)
    found = differences(committed["header"], fresh["header"], "header")
    if len(committed["cases"]) != len(fresh["cases"]):
        found.append("%d cases in the file, %d regenerated"
                     % (len(committed["cases"]), len(fresh["cases"])))
    for old, new in zip(committed["cases"], fresh["cases"]):
        found += differences(old, new, new["name"])
    if found:
        print("%s is not what %s produces (%d differences; regenerate it):"
              % (path, pathlib.Path(__file__).name, len(found)))
        for line in found[:20]:
            print("  " + line)
        return 1
    print("%s is current: %d cases (numpy %s, floats within %d ULP)"
          % (path, len(fresh["cases"]), np.__version__, ULPS))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", nargs="?", default=str(DEFAULT_OUTPUT),
                        help="the file to write (default: reference_data.json beside the script)")
    parser.add_argument("--check", metavar="FILE",
                        help="compare FILE with a fresh generation instead of writing")
    arguments = parser.parse_args()
    if np is None:
        print("numpy is missing: run with /usr/bin/python3 (Debian's python3-numpy)")
        return SKIPPED
    if arguments.check:
        return check(arguments.check)
    document = generate()
    pathlib.Path(arguments.output).write_text(dump(document))
    print("wrote %d cases to %s" % (len(document["cases"]), arguments.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
