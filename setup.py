"""Build of the optional compiled core (everything else is in pyproject.toml).

The extension is optional: without Cython or a C compiler the build warns and installs the
pure-Python package, which then runs the Python reference walk (warclake.tasks.native).
"""
import os

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.extension import Extension

NATIVE = [("warclake.tasks.native.lexbor_walk", "tasks/native/lexbor_walk.pyx"),
          ("warclake.tasks.native.sieve_features", "tasks/native/sieve_features.pyx"),
          ("warclake.tasks.native.sieve_structure", "tasks/native/sieve_structure.pyx"),
          ("warclake.tasks.native.corpus_signatures", "tasks/native/corpus_signatures.pyx"),
          ("warclake.tasks.native.corpus_quality", "tasks/native/corpus_quality.pyx"),
          ("warclake.tasks.native.corpus_step", "tasks/native/corpus_step.pyx"),
          ("warclake.tasks.native.language_trigrams", "tasks/native/language_trigrams.pyx"),
          ("warclake.tasks.native.page_scan", "tasks/native/page_scan.pyx"),
          ("warclake.tasks.native.language_text", "tasks/native/language_text.pyx"),
          ("warclake.tasks.native.corpus_fasttext", "tasks/native/corpus_fasttext.pyx")]


JOBS = os.cpu_count() or 1   # the extensions are generated and compiled side by side


def optimisation(name: str) -> str:
    """-O3 for the corpus modules and the page pre-scan: their loops over a document's
    characters (hashes, counts) gain from it (the per-archive pass about 5 %, the pre-scan's
    byte loop is vectorised only there); -O2 for the rest."""
    short = name.rsplit(".", 1)[1]
    return "-O3" if short.startswith("corpus_") or short == "page_scan" else "-O2"


def native_extensions() -> list:
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("warning: Cython is missing; warclake installs without its compiled core")
        return []
    extensions = [Extension(name, [source], optional=True, extra_compile_args=[optimisation(name)])
                  for name, source in NATIVE]
    try:
        built = cythonize(extensions, language_level=3, quiet=True, nthreads=JOBS)
    except Exception as exc:  # noqa: BLE001 - any failure leaves the Python path
        print(f"warning: the compiled core was not generated ({exc}); installing without it")
        return []
    for ext in built:  # cythonize's copies do not keep it: a compile error only warns
        ext.optional = True
    return built


class BuildPy(build_py):
    """The repository root is the package ``warclake``: this build script is not one of its modules."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if (package, m[1]) != ("warclake", "setup")]


setup(ext_modules=native_extensions(), options={"build_ext": {"parallel": JOBS}},
      cmdclass={"build_py": BuildPy})
