"""Bad arguments, generated: every public function of kael, kael.nn.functional and every Tensor
method, every layer and optimizer class, called with values of the wrong type in the first
positions. Each must raise a typed error (TypeError, ValueError, IndexError, ...) whose message
says what was wrong; none may fall through to the module's catch-all for casts inside a
binding, which cannot name the op, nor surface an AttributeError from inside kael, nor crash."""
import inspect

import pytest

import kael

BAD = ["a", None, object(), [1, "a"], {"a": 1}, kael.float32, 1.5]
CATCH_ALL = "an argument has a type"
# Functions whose job is to take anything (printing, seeding the RNG from any hashable) or
# that touch global state or files.
SKIP = {"manual_seed", "set_num_threads", "seed", "save", "load", "set_default_dtype",
        "use_deterministic_algorithms", "set_printoptions", "compile", "is_tensor",
        "is_storage", "set_grad_enabled", "no_grad", "enable_grad"}
TYPED = (TypeError, ValueError, IndexError, RuntimeError, MemoryError, NotImplementedError,
         KeyError, OverflowError)


def _calls():
    x = kael.ones(2, 3)
    for name in dir(kael):
        f = getattr(kael, name)
        if name.startswith("_") or name in SKIP or not callable(f) or inspect.isclass(f):
            continue
        for bad in BAD:
            yield f"kael.{name}", f, [(bad,), (x, bad), (x, 1, bad)]
    for name in dir(kael.Tensor):
        if name.startswith("_") or name in SKIP:
            continue
        yield f"Tensor.{name}", name, None
    functional = kael.nn.functional
    for name in dir(functional):
        f = getattr(functional, name)
        if not name.startswith("_") and callable(f) and not inspect.isclass(f):
            yield f"F.{name}", f, [(bad,) for bad in BAD] + [(x, bad) for bad in BAD] + \
                [(x, x, bad) for bad in BAD]
    for module in (kael.nn, kael.optim):
        for name in dir(module):
            c = getattr(module, name)
            if not name.startswith("_") and inspect.isclass(c):
                yield f"{module.__name__}.{name}", c, [(bad,) for bad in BAD] + \
                    [(2, bad) for bad in BAD] + [(2, 3, bad) for bad in BAD]


def _check(label, f, argument_sets):
    problems = []
    for args in argument_sets:
        try:
            f(*args)
        except TYPED as error:
            if CATCH_ALL in str(error):
                problems.append(f"{label}{args!r:.60}: {error}")
        except Exception as error:  # noqa: BLE001 - any other type is the failure
            problems.append(f"{label}{args!r:.60}: {type(error).__name__}: {error}")
    return problems


def test_every_bad_argument_gets_a_typed_error_that_names_it():
    problems = []
    for label, f, argument_sets in _calls():
        if argument_sets is None:  # a Tensor method, on a fresh tensor each time
            method = getattr(kael.ones(2, 3), f)
            if not callable(method):
                continue
            argument_sets = [(bad,) for bad in BAD] + [(1, bad) for bad in BAD]
            problems += _check(label, method, argument_sets)
        else:
            problems += _check(label, f, argument_sets)
    assert not problems, f"{len(problems)} bad arguments:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("call,named", [
    (lambda: kael.ones(2, 3).split("a"), "split: split_size_or_sections"),
    (lambda: kael.split(kael.ones(4), [1, "a"]), "split: split_size_or_sections"),
    (lambda: kael.nn.functional.layer_norm(kael.ones(2, 3), "a"), "layer_norm: normalized_shape"),
    (lambda: kael.nn.functional.pad(kael.ones(2, 3), None), "pad: pad"),
    (lambda: kael.zeros_like([1, 2]), "zeros_like: input must be a Tensor, not list"),
    (lambda: kael.full_like(None, 1.0), "full_like: input must be a Tensor, not NoneType"),
    (lambda: kael.ones(3).scatter_(0, kael.zeros(1, dtype=kael.int64), value=1.0, reduce=3),
     "scatter_: reduce must be a str, not int"),
])
def test_bad_arguments_name_the_op_and_the_argument(call, named):
    with pytest.raises(TypeError, match=named):
        call()
