"""Runs the examples of kael's docstrings (every '>>>' line) and prints each one that fails:
an example that raises, or whose written output differs from what it prints. An example with
no written output only has to run. Run in its own process: examples change global state (seeds,
thread counts).

    PYTHONPATH=build/python python3 python/tests/doc_examples.py
"""
import doctest
import inspect
import sys

import test_api_docs

import kael


class AnyOutputWhenNoneWritten(doctest.OutputChecker):
    def check_output(self, want, got, optionflags):
        return not want.strip() or super().check_output(want, got, optionflags)


def main():
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(checker=AnyOutputWhenNoneWritten(), verbose=False,
                                   optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    seen, examples = set(), 0
    for name, (value, _) in test_api_docs.documented_api():
        doc = inspect.getdoc(value) or ""
        if ">>>" not in doc or id(value) in seen:
            continue
        seen.add(id(value))
        test = parser.get_doctest(doc, {"kael": kael}, name, None, 0)
        examples += len(test.examples)
        runner.run(test, out=sys.stdout.write)
    failed, _ = runner.summarize(verbose=False)
    print(f"{examples} examples, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
