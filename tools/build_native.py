"""Build the tools' compiled helpers in place (``python tools/build_native.py``; ``./dev``
runs it): the training histograms of ``tools.train_sieve``. Without Cython or a compiler
it warns and the tools use their numpy references."""
import os
import sys
import tempfile

from setuptools import setup
from setuptools.extension import Extension

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("warning: Cython is missing; the tools use their numpy references", file=sys.stderr)
        return
    os.chdir(HERE)   # not the repository root: its pyproject.toml describes the package
    ext = Extension("sieve_histograms", ["sieve_histograms.pyx"], extra_compile_args=["-O2"])
    # objects and the built module's staging copy in a temporary folder: nothing is left in a
    # build/ that a later build of the package's wheel would pick up
    with tempfile.TemporaryDirectory(prefix="warclake-tools-build-") as tmp:
        setup(name="warclake-tools", ext_modules=cythonize([ext], language_level=3, quiet=True),
              script_args=["-q", "build_ext", "--inplace", "--build-temp", os.path.join(tmp, "temp"),
                           "--build-lib", os.path.join(tmp, "lib")])

if __name__ == "__main__":
    main()
