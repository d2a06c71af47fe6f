"""Point the ros-jazzy wheels' CMake export files at this venv's Python and numpy headers.

The wheels are built on a manylinux image and their installed ``*.cmake`` files hard-code that machine's
``/opt/python/cp3XX-cp3XX/include/python3.X`` and numpy include directories; CMake then refuses them with
"includes non-existent path". Rewriting those paths is idempotent: a second run changes nothing.
"""
from __future__ import annotations

import re
import sys
import sysconfig
from pathlib import Path

import numpy

PYTHON_INCLUDE = re.compile(r"/opt/python/cp3\d+-cp3\d+t?/include/python3\.\d+t?")
NUMPY_INCLUDE = re.compile(r"/opt/python/cp3\d+-cp3\d+t?/lib/python3\.\d+t?/site-packages/numpy/(?:_core|core)/include")


def rewrite(text: str, python_include: str, numpy_include: str) -> str:
    text = NUMPY_INCLUDE.sub(numpy_include, text)
    return PYTHON_INCLUDE.sub(python_include, text)


def main(prefix: str) -> int:
    python_include = sysconfig.get_paths()["include"]
    numpy_include = numpy.get_include()
    changed = 0
    for path in Path(prefix).rglob("*.cmake"):
        text = path.read_text(errors="surrogateescape")
        if "/opt/python/" not in text:
            continue
        new = rewrite(text, python_include, numpy_include)
        if new != text:
            path.write_text(new, errors="surrogateescape")
            changed += 1
    leftovers = [p for p in Path(prefix).rglob("*.cmake") if "/opt/python/" in p.read_text(errors="surrogateescape")]
    print(f"fix_ros_wheel_cmake: rewrote {changed} file(s) under {prefix}")
    for path in leftovers:
        print(f"fix_ros_wheel_cmake: warning: {path} still names /opt/python", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else sys.prefix))
