"""A target written as a dict with a host target (TVM's ``T.target({..., "host":
T.target({...})})``) keeps its host through a print -> parse round trip."""

from __future__ import annotations

import tilelang
from tilelang.ir import assert_structural_equal
from tilelang.target import Target


def test_dict_target_keeps_its_host():
    mod = tilelang.parse("""
@T.prim_func
def f():
    T.func_attr({"kTarget": T.target({"kind": "cuda", "arch": "sm_70", "tag": "",
                                      "keys": ["cuda", "gpu"],
                                      "host": T.target({"kind": "llvm", "tag": "", "keys": ["cpu"]})})})
    T.evaluate(0)
""")
    target = mod["f"].attrs["kTarget"]
    assert target.host is not None and target.host.kind == "llvm"
    printed = mod.script()
    assert '"host": T.target({"kind": "llvm"' in printed
    again = tilelang.parse(printed)
    assert_structural_equal(mod, again)
    assert again["f"].attrs["kTarget"] == target
    assert isinstance(again["f"].attrs["kTarget"].host, Target)
