#!/usr/bin/python3
"""Writes ONNX's backend node tests into a folder, with ONNX's own generator.

    /usr/bin/python3 generate.py OUT_DIR [STAMP_FILE]

Runs `onnx.backend.test.cmd_tools generate-data -o OUT_DIR` of the installed ONNX package
(Debian's python3-onnx 1.12), node tests only: OUT_DIR/node/test_*/model.onnx and
test_data_set_*/input_*.pb, output_*.pb. Debian's ONNX 1.12 test cases call numpy aliases
that numpy 1.24 removed (np.float, np.int, np.bool, np.object, ...); they are put back on
the numpy module before the generator is imported. The stamp file, when given, is written
last (with the number of tests), so a build system reruns an interrupted generation.
"""

import argparse
import os
import shutil
import sys
import warnings

import numpy as np

# The aliases numpy 1.20 deprecated and 1.24 removed, as they were: the Python builtins.
for _alias, _value in {
    "bool": bool,
    "int": int,
    "float": float,
    "complex": complex,
    "object": object,
    "str": str,
    "long": int,
    "unicode": str,
}.items():
    if _alias not in np.__dict__:
        setattr(np, _alias, _value)

import onnx.backend.test.case.model as model_test  # noqa: E402
from onnx.backend.test import cmd_tools  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output", help="folder to write into (node/ is replaced)")
    parser.add_argument("stamp", nargs="?", help="file written when generation succeeded")
    parser.add_argument("-t", "--op_type", default=None, help="only the tests of this operator")
    args = parser.parse_args()

    node_dir = os.path.join(args.output, "node")
    shutil.rmtree(node_dir, ignore_errors=True)  # no tests left over from another ONNX
    # Node tests only: the model tests (real/, simple/, pytorch-*) are not needed.
    model_test.collect_testcases = lambda *a, **k: []
    warnings.simplefilter("ignore")  # the test cases' own deprecation warnings
    cmd_tools.generate_data(argparse.Namespace(output=args.output, op_type=args.op_type))

    count = len([d for d in os.listdir(node_dir) if d.startswith("test_")])
    if count == 0:
        print("generate.py: no node tests were written", file=sys.stderr)
        return 1
    if args.stamp:
        with open(args.stamp, "w") as f:
            f.write(f"{count} node tests in {node_dir}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
