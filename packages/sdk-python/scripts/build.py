"""Builds the sdist and the wheel of ax-scheduler-sdk, offline, with setuptools' PEP 517 hooks.

    python3 scripts/build.py [OUT_DIR]      (OUT_DIR defaults to ./dist)

This is what `python3 -m build --no-isolation` does, without needing the `build` package: it
calls ``setuptools.build_meta.build_sdist`` and ``build_wheel`` on a copy of this folder (so no
``build/`` or ``*.egg-info`` is left in the work tree) and prints the two paths. It needs the
interpreter's own setuptools (>= 61) and, for setuptools older than 70.1, the ``wheel`` package:
Debian's ``python3-setuptools`` and ``python3-wheel`` (``/usr/bin/python3``) have both. Nothing
is downloaded.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent
CONTENTS = ["pyproject.toml", "MANIFEST.in", "README.md", "LICENSE", "CHANGELOG.md", "ax_sdk", "tests"]


def missing_tools() -> str | None:
    """What this interpreter lacks to build both artifacts, or None."""
    try:
        import setuptools
    except ImportError:
        return "setuptools is not installed (apt-get install python3-setuptools, or pip install setuptools)"
    major, minor = (int(part) for part in setuptools.__version__.split(".")[:2])
    if (major, minor) < (61, 0):
        return f"setuptools {setuptools.__version__} is older than 61 (pyproject.toml metadata)"
    if (major, minor) < (70, 1):
        try:
            import wheel  # noqa: F401  (bdist_wheel of setuptools < 70.1 lives there)
        except ImportError:
            return f"setuptools {setuptools.__version__} needs the wheel package to build a wheel (apt-get install python3-wheel, or pip install wheel)"
    return None


def main(argv: list[str]) -> int:
    out = Path(argv[1] if len(argv) > 1 else SOURCE / "dist").resolve()
    problem = missing_tools()
    if problem is not None:
        print(f"build.py: {sys.executable}: {problem}", file=sys.stderr)
        return 2
    from setuptools import build_meta

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ax-sdk-python-build-") as scratch:
        tree = Path(scratch) / "src"
        tree.mkdir()
        for name in CONTENTS:
            path = SOURCE / name
            if path.is_dir():
                shutil.copytree(path, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(path, tree / name)
        os.chdir(tree)
        # setuptools narrates on stdout: keep stdout for the two paths
        with contextlib.redirect_stdout(sys.stderr):
            sdist = build_meta.build_sdist(str(out))
            wheel = build_meta.build_wheel(str(out))
    print(out / sdist)
    print(out / wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
