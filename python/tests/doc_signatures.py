"""Checks that every docstring's text signature names the parameters the binding really takes:
run with KAEL_PYBIND_SIGNATURES=1, where pybind11's typed lines precede kael's docstring, and
prints each function whose documented names are not among some overload's.

    KAEL_PYBIND_SIGNATURES=1 PYTHONPATH=build/python python3 python/tests/doc_signatures.py
"""
import inspect
import re
import sys

import test_api_docs

SIGNATURE = re.compile(r"^(?:\d+\. )?(\w+)\((.*)\)(?: -> .+)?$")


def parameter_names(text):
    names, depth, current = [], 0, ""
    for char in text + ",":
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            name = current.split(":")[0].split("=")[0].strip()
            if name and name not in ("*", "/"):
                names.append(name)
            current = ""
        else:
            current += char
    return names


def main():
    mismatched, checked = [], 0
    for name, (value, _) in test_api_docs.documented_api():
        target = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if not inspect.isbuiltin(target) and not inspect.ismethoddescriptor(target):
            target = getattr(target, "__func__", target)
        if not inspect.isbuiltin(target):
            continue
        lines = (target.__doc__ or "").splitlines()
        documented = [line for i, line in enumerate(lines[:-1]) if lines[i + 1] == "--"]
        typed = [parameter_names(m.group(2)) for line in lines
                 if (m := SIGNATURE.match(line.strip())) and m.group(2) != "*args, **kwargs"
                 and lines[lines.index(line) + 1: lines.index(line) + 2] != ["--"]]
        if not documented or not typed:
            continue
        checked += 1
        match = SIGNATURE.match(documented[0].strip())
        names = [n for n in parameter_names(match.group(2)) if not n.startswith("*")]
        names = [n for n in names if n != "self"]
        known = [[n for n in overload if n != "self"] for overload in typed]
        star = any(n.startswith("*") for overload in known for n in overload)
        if not star and not any(set(names) <= set(overload) for overload in known):
            mismatched.append(f"{name}: documented {names}, binding {known}")
    print(f"{checked} signatures checked")
    for line in mismatched:
        print(line)
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
