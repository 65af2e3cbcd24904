"""docs/python.md's examples run as they stand: its ```python blocks, in order, in one namespace,
from a scratch directory holding data/mt-ende (the shared corpus). A block that imports a module
this Python lacks (safetensors) is skipped, and said to be."""
import contextlib
import io
import os
import re

import warnings

from conftest import CORPUS, SOURCE_DIR


def blocks():
    text = (SOURCE_DIR / "docs" / "python.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_every_example_runs(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    os.symlink(CORPUS, tmp_path / "data" / "mt-ende")
    monkeypatch.chdir(tmp_path)
    namespace, skipped = {}, []
    assert len(blocks()) >= 6
    for code in blocks():
        wanted = re.findall(r"^from (\w+)[\w.]* import|^import (\w+)", code, re.M)
        missing = [m for pair in wanted for m in pair if m and m != "attn" and not _importable(m)]
        if missing:
            skipped.append(missing)
            continue
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "docs/python.md", "exec"), namespace)  # noqa: S102 - the docs' own code
    assert len(namespace["losses"]) == 3
    assert len(namespace["outputs"]) == 4
    if skipped:
        warnings.warn(f"docs/python.md: blocks needing {skipped} (not installed here) were not run")


def _importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False
