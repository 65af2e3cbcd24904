"""What the import tests (hf_marian_test.py, ct2_test.py, ct2_export_test.py) share: running in
the reference venv of scripts/setup.sh --reference, and the corpus lines they compare on.

ctest runs Debian's python3; a test whose reference packages (transformers, ctranslate2) fail to
import calls reexec_or_skip, which runs the test again in the venv's interpreter when there is one
and otherwise exits 77 (ctest's "skipped"). Standard library only: it runs before those imports.
"""
import os
import sys

REFERENCE_PYTHON = os.path.join(os.environ.get("ATTN_REF_VENV", "/work/venv-ref"), "bin", "python")


def reexec_or_skip(error):
    if os.path.exists(REFERENCE_PYTHON) and not os.environ.get("ATTN_REF_REEXEC"):
        os.environ["ATTN_REF_REEXEC"] = "1"
        os.execv(REFERENCE_PYTHON, [REFERENCE_PYTHON] + sys.argv)
    print(f"SKIP: {error} (scripts/setup.sh --reference makes the venv this test runs in: {REFERENCE_PYTHON})")
    sys.exit(77)


def lines_of(path, n):
    """The first n lines of path, without their newlines (StopIteration when it has fewer)."""
    with open(path, encoding="utf-8") as f:
        return [next(f).rstrip("\n") for _ in range(n)]
