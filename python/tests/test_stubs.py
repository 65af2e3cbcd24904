"""The type stubs (attn/__init__.pyi) describe the module as it is: every class, method, attribute
and function they declare exists, and every public name of the module is declared."""
import ast
import inspect

import attn
from conftest import SOURCE_DIR


def declared():
    tree = ast.parse((SOURCE_DIR / "python" / "attn" / "__init__.pyi").read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            members |= {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
            out[node.name] = members
        elif isinstance(node, ast.FunctionDef):
            out[node.name] = None
    return out


def test_stubs_match_the_module():
    stubs = declared()
    assert set(attn.__all__) == set(stubs)
    for name, members in stubs.items():
        obj = getattr(attn, name)
        for member in members or ():
            assert hasattr(obj, member), f"{name}.{member}"
    params = inspect.signature(attn.train).parameters
    assert list(params)[:3] == ["config", "callback", "resume"]
