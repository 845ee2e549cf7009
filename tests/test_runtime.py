"""Targets, the backend registry, argument checking, arrays, timing and the build cache."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import ArgumentError, BuildError
from tilelang.ir import Buffer, BufferStore, For, PrimFunc, SizeVar, Var, decl_buffer
from tilelang.runtime import registry
from tilelang.runtime.cache import cache_dir, content_key
from tilelang.target import Target


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def linear_add():
    """Z[0, j] = X[0, j] + W[j, m - 1] over symbolic n, m (flat, lowered by hand)."""
    m, n = SizeVar("m", "int64"), SizeVar("n", "int64")
    params = [Var(x, "handle") for x in ("x", "w", "z")]
    X = decl_buffer((1, n), "float32", "X")
    W = decl_buffer((n, m), "float32", "W")
    Z = decl_buffer((1, n), "float32", "Z")
    Xf, Wf, Zf = (Buffer(b.name, b.data, "float32", (b.total_elements(),)) for b in (X, W, Z))
    j = Var("j", "int64")
    body = For(j, 0, n, "serial", BufferStore(Zf, Xf[j] + Wf[j * m + m - 1], (j,)))
    attrs = {"global_symbol": "linear_add", "tl.size_vars": (n, m), "tl.lowered": True}
    return PrimFunc(tuple(params), body, buffer_map=dict(zip(params, (X, W, Z))), attrs=attrs)


# ----------------------------------------------------------------- targets


def test_target_parsing():
    t = Target("llvm -mcpu=native -num-cores=2")
    assert (t.kind, t.options) == ("llvm", {"mcpu": "native", "num-cores": 2})
    assert t.num_cores == 2 and str(t) == "llvm -mcpu=native -num-cores=2"
    assert Target("llvm --num-cores=1").num_cores == 1
    assert Target("cuda -arch=sm_90").get("arch") == "sm_90"
    assert Target({"kind": "c", "fast": True}).options == {"fast": True}
    assert Target(Target("c")) == Target("c")


@pytest.mark.parametrize("spec", ["lvm", "", "c mcpu", 3, {"arch": "x"}])
def test_bad_targets_are_build_errors(spec):
    with pytest.raises(BuildError):
        Target(spec)


# ---------------------------------------------------------------- registry


class RecordingBackend:
    """A backend that records the checked arguments it receives."""

    def __init__(self, mod, target):
        self.calls, self.target = [], target
        self.functions = {name: self._record for name, _ in mod}

    def _record(self, *args):
        self.calls.append(args)

    def get_source(self, fmt=""):
        return "recorded"


@pytest.fixture
def recording(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))
    registry.register_backend("recording", RecordingBackend)
    return "recording"


def test_registered_backend_gets_checked_args(recording):
    lib = tilelang.build(linear_add(), target=recording + " -x=1")
    assert lib.target.get("x") == 1 and lib.get_source() == "recorded"
    x, w, z = np.ones((1, 3), "float32"), np.ones((3, 5), "float32"), np.ones((1, 3), "float32")
    lib["linear_add"](x, w, z)
    (args,) = lib.backend_module.calls
    assert args[0] is x and args[1] is w and args[2] is z and args[3:] == (3, 5)
    with pytest.raises(ValueError, match="already registered"):
        registry.register_backend(recording, RecordingBackend)
    with pytest.raises(BuildError, match="does not take the option"):
        tilelang.build(linear_add(), target=recording, extern_sources=["x"])


def test_entry_point_backends_are_discovered(monkeypatch):
    from importlib import metadata

    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))
    entry = metadata.EntryPoint("viaentry", f"{__name__}:RecordingBackend", "tilelang.backends")
    monkeypatch.setattr(registry, "_entry_points", lambda: {"viaentry": entry})
    assert "viaentry" in registry.backend_kinds()
    lib = tilelang.build(linear_add(), target="viaentry")
    assert type(lib.backend_module).__name__ == "RecordingBackend"


def test_export_library_unsupported(recording):
    lib = tilelang.build(linear_add(), target=recording)
    with pytest.raises(BuildError, match="not supported"):
        lib.export_library("x.so")


# ------------------------------------------------------- argument checking


@pytest.fixture(params=["c", "llvm", "python"])
def lib(request):
    """The same checked function on every CPU backend: checks happen before any of them."""
    return tilelang.build(linear_add(), target=request.param)


def good_args():
    return (
        np.ones((1, 4), "float32"),
        np.arange(12, dtype="float32").reshape(4, 3),
        np.zeros((1, 4), "float32"),
    )


def test_symbolic_shapes_run(lib):
    for n, m in ((1, 1), (4, 3), (33, 7)):
        x = np.random.rand(1, n).astype("float32")
        w = np.random.rand(n, m).astype("float32")
        z = np.zeros((1, n), "float32")
        lib["linear_add"](x, w, z)
        np.testing.assert_array_equal(z, x + w[:, -1][None, :])


BAD_CALLS = {
    "dtype": (
        lambda x, w, z: (x.astype("float64"), w, z),
        "argument 'x' (1st): expected dtype float32, got float64",
    ),
    "shape": (
        lambda x, w, z: (x, w, z[:, :3].copy()),
        "argument 'z' (3rd): dimension 1 is n = 4 from argument 'x' (1st), got 3",
    ),
    "rank": (
        lambda x, w, z: (x, w.ravel(), z),
        "argument 'w' (2nd): expected a 2-D array of shape (n, m), got 1-D",
    ),
    "non-contiguous": (
        lambda x, w, z: (x, np.asfortranarray(w), z),
        "argument 'w' (2nd): expected a contiguous",
    ),
    "too few": (lambda x, w, z: (x, w), "too few arguments: linear_add(x, w, z) takes 3, got 2"),
    "too many": (lambda x, w, z: (x, w, z, z), "too many arguments"),
    "list": (lambda x, w, z: (x.tolist(), w, z), "argument 'x' (1st): expected an array"),
    "read-only output": (
        lambda x, w, z: (x, w, np.broadcast_to(z, z.shape)),
        "argument 'z' (3rd): the array is read-only",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_calls_raise_before_running(lib, case):
    make, message = BAD_CALLS[case]
    x, w, z = good_args()
    args = make(x, w, z)
    before = [np.array(a, copy=True) for a in args if isinstance(a, np.ndarray)]
    with pytest.raises(ArgumentError) as info:
        lib["linear_add"](*args)
    assert str(info.value).startswith(message)
    after = [a for a in args if isinstance(a, np.ndarray)]
    assert all(np.array_equal(a, b) for a, b in zip(before, after))


def test_scalar_arguments_are_checked():
    n = Var("n")
    a = Var("a", "handle")
    A = decl_buffer((n,), "int32", "A")
    i = Var("i")
    body = For(i, 0, n, "serial", BufferStore(A, A[i] * 2, (i,)))
    attrs = {"global_symbol": "f", "tl.size_vars": (), "tl.lowered": True}
    lib = tilelang.build(PrimFunc((a, n), body, buffer_map={a: A}, attrs=attrs), "c")
    out = np.arange(3, dtype="int32")
    with pytest.raises(ArgumentError, match=r"argument 'n' \(2nd\): expected an integer"):
        lib["f"](out, 2.5)
    with pytest.raises(ArgumentError, match=r"argument 'n' \(2nd\): value is n = 3"):
        lib["f"](out, 5)
    with pytest.raises(ArgumentError, match="does not fit in int32"):
        lib["f"](np.zeros(0, "int32"), 2**40)
    lib["f"](out, np.int64(3))
    np.testing.assert_array_equal(out, [0, 2, 4])


def test_overlapping_noalias_arguments_are_refused():
    params = [Var("a", "handle"), Var("b", "handle")]
    A, B = decl_buffer((4,), "float32", "A"), decl_buffer((4,), "float32", "B")
    i = Var("i")
    body = For(i, 0, 4, "serial", BufferStore(B, A[i], (i,)))
    attrs = {"global_symbol": "copy", "tl.size_vars": (), "tl.lowered": True, "tir.noalias": True}
    lib = tilelang.build(
        PrimFunc(tuple(params), body, buffer_map=dict(zip(params, (A, B))), attrs=attrs), "c"
    )
    data = np.arange(6, dtype="float32")
    with pytest.raises(ArgumentError, match="overlap"):
        lib["copy"](data[:4], data[2:])


# --------------------------------------------------------- array interop


class ArrayInterfaceOnly:
    def __init__(self, array):
        self._array = array
        self.__array_interface__ = array.__array_interface__


class DLPackOnly:
    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_array_interface_and_nd_arrays_are_accepted(lib):
    x, w, z = good_args()
    out = np.zeros((1, 4), "float32")
    lib["linear_add"](DLPackOnly(x), ArrayInterfaceOnly(w), out)
    np.testing.assert_array_equal(out, x + w[:, -1])
    z_nd = tilelang.nd.empty((1, 4), "float32", tilelang.cpu())
    lib["linear_add"](tilelang.nd.array(x), tilelang.nd.array(w), z_nd)
    np.testing.assert_array_equal(z_nd.numpy(), out)
    lib["linear_add"](x, w, DLPackOnly(z))  # output written through the DLPack view
    np.testing.assert_array_equal(z, out)


def test_devices():
    assert tilelang.cpu().exist and str(tilelang.cpu(0)) == "cpu(0)"
    assert tilelang.cuda(1).device_type == "cuda"


# ---------------------------------------------------------------- timing


def test_time_evaluator_fields(lib):
    timer = lib.time_evaluator("linear_add", tilelang.cpu(), number=3, repeat=4)
    result = timer(*good_args())
    assert len(result.results) == 4 and all(r > 0 for r in result.results)
    assert result.min <= result.median <= result.max and result.mean > 0
    assert "mean (ms)" in str(result)
    slow = lib.time_evaluator("linear_add", number=1, repeat=1, min_repeat_ms=20)(*good_args())
    assert slow.results[0] > 0
    with pytest.raises(ArgumentError):
        timer(np.ones(3))


# ----------------------------------------------------------------- cache


def _corrupt(path, data):
    """Damage a cache entry the way a crashed writer would: a new file in its place
    (never in place: this process has the old library mapped)."""
    tmp = path.with_name("damaged")
    tmp.write_bytes(data)
    tmp.replace(path)


def test_cache_hit_miss_and_corruption():
    first = tilelang.build(linear_add(), "c").backend_module
    assert not first.was_cached and first.library_path.parent.parent == cache_dir()
    second = tilelang.build(linear_add(), "c").backend_module
    assert second.was_cached and second.library_path == first.library_path
    other = tilelang.build(linear_add(), "c -opt-level=1").backend_module
    assert not other.was_cached and other.library_path != first.library_path
    good = first.library_path.read_bytes()
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0xFF  # loads fine, but is not what was built
    for damage in (b"\x7fELF garbage", good[: len(good) // 2], bytes(flipped)):
        _corrupt(first.library_path, damage)
        rebuilt = tilelang.build(linear_add(), "c")
        assert not rebuilt.backend_module.was_cached
        assert tilelang.build(linear_add(), "c").backend_module.was_cached
        x, w, z = good_args()
        rebuilt["linear_add"](x, w, z)
        np.testing.assert_array_equal(z, x + w[:, -1])
    leftovers = [p.name for p in first.library_path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_content_key_separates_parts():
    assert content_key("ab", "c") != content_key("a", "bc")
    assert content_key("x") == content_key("x")
