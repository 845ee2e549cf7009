"""Unscheduled programs the default CPU rules are measured and tested on
(benchmarks/bench_default.py, tests/test_schedule_rules.py): each as plain TensorIR
in the order of the math, the same loops in naive C, and a NumPy reference.

Sizes are parameters so the tests run the same programs small.
"""

from __future__ import annotations

import attrs
import numpy as np


@attrs.frozen
class Workload:
    """``tir`` (one prim_func named ``name``), ``c`` (a C function ``name`` over float
    pointers in the same argument order), ``shapes`` (one per argument, the output
    last), ``reference(*inputs) -> output`` and the flop count."""

    name: str
    tir: str
    c: str
    shapes: tuple
    reference: object
    flops: float
    fast_math: bool = False  # compare with gcc -ffast-math (softmax, layernorm)

    def arguments(self, seed: int = 0) -> list:
        rng = np.random.default_rng(seed)
        return [rng.standard_normal(s).astype("float32") for s in self.shapes]


def _head(name, params):
    args = ", ".join(f'{n}: T.Buffer({s}, "float32")' for n, s in params)
    return (
        "@T.prim_func\n"
        f"def {name}({args}):\n"
        f'    T.func_attr({{"global_symbol": "{name}", "tir.noalias": True}})\n'
    )


def _c_head(name, names):
    args = ", ".join(f"float *restrict {n}" for n in names)
    return f"#include <math.h>\nvoid {name}({args}) {{\n"


def matmul(n=1024, m=1024, k=1024, relu=False) -> Workload:
    name = "mm_relu" if relu else "matmul"
    out = "Y" if relu else "C"
    tir = _head(name, [("A", (n, k)), ("B", (k, m)), ("C", (n, m))])
    if relu:
        tir += f'    Y = T.alloc_buffer(({n}, {m}), "float32")\n'
    tir += (
        f"    for i, j, k in T.grid({n}, {m}, {k}):\n"
        f'        with T.block("{out}"):\n'
        '            vi, vj, vk = T.axis.remap("SSR", [i, j, k])\n'
        "            with T.init():\n"
        f"                {out}[vi, vj] = T.float32(0)\n"
        f"            {out}[vi, vj] = {out}[vi, vj] + A[vi, vk] * B[vk, vj]\n"
    )
    if relu:
        tir += (
            f"    for i, j in T.grid({n}, {m}):\n"
            '        with T.block("C"):\n'
            '            vi, vj = T.axis.remap("SS", [i, j])\n'
            "            C[vi, vj] = T.max(Y[vi, vj], T.float32(0))\n"
        )
    body = (
        f"  for (int i = 0; i < {n}; i++) for (int j = 0; j < {m}; j++) {{\n"
        f"    float s = 0; for (int k = 0; k < {k}; k++) s += A[i*{k}+k] * B[k*{m}+j];\n"
        f"    C[i*{m}+j] = {'s > 0 ? s : 0' if relu else 's'};\n  }}\n}}\n"
    )

    def reference(a, b):
        y = a @ b
        return np.maximum(y, 0) if relu else y

    return Workload(
        name, tir, _c_head(name, "ABC") + body, ((n, k), (k, m), (n, m)), reference, 2.0 * n * m * k
    )


def dense(n=1, m=1024, k=4096) -> Workload:
    """A linear layer's product ``X @ W.T`` (W stored (out, in), as nn.Linear keeps it);
    with n = 1 a matrix-vector product: the reduction runs along both operands'
    contiguous axis."""
    tir = _head("dense", [("X", (n, k)), ("W", (m, k)), ("Y", (n, m))]) + (
        f"    for i, j, k in T.grid({n}, {m}, {k}):\n"
        '        with T.block("Y"):\n'
        '            vi, vj, vk = T.axis.remap("SSR", [i, j, k])\n'
        "            with T.init():\n"
        "                Y[vi, vj] = T.float32(0)\n"
        "            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]\n"
    )
    c = _c_head("dense", "XWY") + (
        f"  for (int i = 0; i < {n}; i++) for (int j = 0; j < {m}; j++) {{\n"
        f"    float s = 0; for (int k = 0; k < {k}; k++) s += X[i*{k}+k] * W[j*{k}+k];\n"
        f"    Y[i*{m}+j] = s;\n  }}\n}}\n"
    )
    return Workload(
        "dense", tir, c, ((n, k), (m, k), (n, m)), lambda x, w: x @ w.T, 2.0 * n * m * k
    )


def batch_matmul(b=16, n=256, m=256, k=256) -> Workload:
    tir = _head("batch_matmul", [("A", (b, n, k)), ("B", (b, k, m)), ("C", (b, n, m))]) + (
        f"    for bb, i, j, k in T.grid({b}, {n}, {m}, {k}):\n"
        '        with T.block("C"):\n'
        '            vb, vi, vj, vk = T.axis.remap("SSSR", [bb, i, j, k])\n'
        "            with T.init():\n"
        "                C[vb, vi, vj] = T.float32(0)\n"
        "            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]\n"
    )
    c = _c_head("batch_matmul", "ABC") + (
        f"  for (int b = 0; b < {b}; b++) for (int i = 0; i < {n}; i++) "
        f"for (int j = 0; j < {m}; j++) {{\n"
        f"    float s = 0; for (int k = 0; k < {k}; k++) "
        f"s += A[(b*{n}+i)*{k}+k] * B[(b*{k}+k)*{m}+j];\n"
        f"    C[(b*{n}+i)*{m}+j] = s;\n  }}\n}}\n"
    )
    return Workload(
        "batch_matmul",
        tir,
        c,
        ((b, n, k), (b, k, m), (b, n, m)),
        lambda x, y: x @ y,
        2.0 * b * n * m * k,
    )


def _pad_block(c, h, w):
    return (
        f"    for n, c, y, x in T.grid(1, {c}, {h + 2}, {w + 2}):\n"
        '        with T.block("pad"):\n'
        '            vn, vc, vy, vx = T.axis.remap("SSSS", [n, c, y, x])\n'
        "            P[vn, vc, vy, vx] = T.if_then_else(1 <= vy and vy < "
        f"{h + 1} and 1 <= vx and vx < {w + 1}, X[vn, vc, vy - 1, vx - 1], T.float32(0))\n"
    )


def _c_pad(c, h, w):
    return (
        f"  static float P[{c}*{h + 2}*{w + 2}];\n"
        f"  for (int c = 0; c < {c}; c++) for (int y = 0; y < {h + 2}; y++) "
        f"for (int x = 0; x < {w + 2}; x++)\n"
        f"    P[(c*{h + 2}+y)*{w + 2}+x] = (y >= 1 && y <= {h} && x >= 1 && x <= {w}) ? "
        f"X[(c*{h}+y-1)*{w}+x-1] : 0;\n"
    )


def _np_pad(x):
    return np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))


def conv2d(c=64, f=64, h=56, w=56) -> Workload:
    """NCHW, batch 1, 3x3 filters, padding 1 (a padding block, then the convolution)."""
    tir = _head("conv2d", [("X", (1, c, h, w)), ("W", (f, c, 3, 3)), ("Y", (1, f, h, w))])
    tir += f'    P = T.alloc_buffer((1, {c}, {h + 2}, {w + 2}), "float32")\n' + _pad_block(c, h, w)
    tir += (
        f"    for n, ff, y, x, rc, ry, rx in T.grid(1, {f}, {h}, {w}, {c}, 3, 3):\n"
        '        with T.block("conv"):\n'
        '            vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", '
        "[n, ff, y, x, rc, ry, rx])\n"
        "            with T.init():\n"
        "                Y[vn, vf, vy, vx] = T.float32(0)\n"
        "            Y[vn, vf, vy, vx] = Y[vn, vf, vy, vx] + "
        "P[vn, vc, vy + vry, vx + vrx] * W[vf, vc, vry, vrx]\n"
    )
    cc = (
        _c_head("conv2d", "XWY")
        + _c_pad(c, h, w)
        + (
            f"  for (int f = 0; f < {f}; f++) for (int y = 0; y < {h}; y++) "
            f"for (int x = 0; x < {w}; x++) {{\n    float s = 0;\n"
            f"    for (int c = 0; c < {c}; c++) for (int ry = 0; ry < 3; ry++) "
            "for (int rx = 0; rx < 3; rx++)\n"
            f"      s += P[(c*{h + 2}+y+ry)*{w + 2}+x+rx] * W[((f*{c}+c)*3+ry)*3+rx];\n"
            f"    Y[(f*{h}+y)*{w}+x] = s;\n  }}\n}}\n"
        )
    )

    def reference(x, wt):
        p = _np_pad(x)
        win = np.lib.stride_tricks.sliding_window_view(p, (3, 3), axis=(2, 3))
        return np.einsum("ncyxij,fcij->nfyx", win, wt, optimize=True).astype("float32")

    return Workload(
        "conv2d",
        tir,
        cc,
        ((1, c, h, w), (f, c, 3, 3), (1, f, h, w)),
        reference,
        2.0 * f * h * w * c * 9,
    )


def depthwise_conv2d(c=64, h=56, w=56) -> Workload:
    tir = _head("depthwise", [("X", (1, c, h, w)), ("W", (c, 3, 3)), ("Y", (1, c, h, w))])
    tir += f'    P = T.alloc_buffer((1, {c}, {h + 2}, {w + 2}), "float32")\n' + _pad_block(c, h, w)
    tir += (
        f"    for n, cc, y, x, ry, rx in T.grid(1, {c}, {h}, {w}, 3, 3):\n"
        '        with T.block("dw"):\n'
        '            vn, vc, vy, vx, vry, vrx = T.axis.remap("SSSSRR", [n, cc, y, x, ry, rx])\n'
        "            with T.init():\n"
        "                Y[vn, vc, vy, vx] = T.float32(0)\n"
        "            Y[vn, vc, vy, vx] = Y[vn, vc, vy, vx] + "
        "P[vn, vc, vy + vry, vx + vrx] * W[vc, vry, vrx]\n"
    )
    cc = (
        _c_head("depthwise", "XWY")
        + _c_pad(c, h, w)
        + (
            f"  for (int c = 0; c < {c}; c++) for (int y = 0; y < {h}; y++) "
            f"for (int x = 0; x < {w}; x++) {{\n    float s = 0;\n"
            "    for (int ry = 0; ry < 3; ry++) for (int rx = 0; rx < 3; rx++)\n"
            f"      s += P[(c*{h + 2}+y+ry)*{w + 2}+x+rx] * W[(c*3+ry)*3+rx];\n"
            f"    Y[(c*{h}+y)*{w}+x] = s;\n  }}\n}}\n"
        )
    )

    def reference(x, wt):
        win = np.lib.stride_tricks.sliding_window_view(_np_pad(x), (3, 3), axis=(2, 3))
        return np.einsum("ncyxij,cij->ncyx", win, wt, optimize=True).astype("float32")

    return Workload(
        "depthwise",
        tir,
        cc,
        ((1, c, h, w), (c, 3, 3), (1, c, h, w)),
        reference,
        2.0 * c * h * w * 9,
    )


def softmax(n=4096, m=1024) -> Workload:
    """Row softmax in TE's four blocks: row max, exp, row sum, normalise."""
    tir = _head("softmax", [("A", (n, m)), ("B", (n, m))]) + (
        f'    mx = T.alloc_buffer(({n},), "float32")\n'
        f'    e = T.alloc_buffer(({n}, {m}), "float32")\n'
        f'    sm = T.alloc_buffer(({n},), "float32")\n'
        f"    for i, k in T.grid({n}, {m}):\n"
        '        with T.block("maxelem"):\n'
        '            vi, vk = T.axis.remap("SR", [i, k])\n'
        "            with T.init():\n"
        "                mx[vi] = T.float32(-3.4028234663852886e38)\n"
        "            mx[vi] = T.max(mx[vi], A[vi, vk])\n"
        f"    for i, k in T.grid({n}, {m}):\n"
        '        with T.block("exp"):\n'
        '            vi, vk = T.axis.remap("SS", [i, k])\n'
        "            e[vi, vk] = T.exp(A[vi, vk] - mx[vi])\n"
        f"    for i, k in T.grid({n}, {m}):\n"
        '        with T.block("expsum"):\n'
        '            vi, vk = T.axis.remap("SR", [i, k])\n'
        "            with T.init():\n"
        "                sm[vi] = T.float32(0)\n"
        "            sm[vi] = sm[vi] + e[vi, vk]\n"
        f"    for i, k in T.grid({n}, {m}):\n"
        '        with T.block("norm"):\n'
        '            vi, vk = T.axis.remap("SS", [i, k])\n'
        "            B[vi, vk] = e[vi, vk] / sm[vi]\n"
    )
    c = _c_head("softmax", "AB") + (
        f"  for (int i = 0; i < {n}; i++) {{\n"
        "    float mx = -3.4028234663852886e38f, s = 0;\n"
        f"    for (int k = 0; k < {m}; k++) mx = A[i*{m}+k] > mx ? A[i*{m}+k] : mx;\n"
        f"    for (int k = 0; k < {m}; k++) {{ B[i*{m}+k] = expf(A[i*{m}+k] - mx); "
        f"s += B[i*{m}+k]; }}\n"
        f"    for (int k = 0; k < {m}; k++) B[i*{m}+k] /= s;\n  }}\n}}\n"
    )

    def reference(a):
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return Workload("softmax", tir, c, ((n, m), (n, m)), reference, 4.0 * n * m, True)


def layernorm(n=4096, m=1024) -> Workload:
    """Per-row mean and variance, then the normalised, scaled and shifted row."""
    tir = _head("layernorm", [("A", (n, m)), ("G", (m,)), ("Bt", (m,)), ("B", (n, m))]) + (
        f'    s1 = T.alloc_buffer(({n},), "float32")\n'
        f'    s2 = T.alloc_buffer(({n},), "float32")\n'
        f"    for i, k in T.grid({n}, {m}):\n"
        '        with T.block("sums"):\n'
        '            vi, vk = T.axis.remap("SR", [i, k])\n'
        "            with T.init():\n"
        "                s1[vi] = T.float32(0)\n"
        "            s1[vi] = s1[vi] + A[vi, vk]\n"
        f"    for i, k in T.grid({n}, {m}):\n"
        '        with T.block("squares"):\n'
        '            vi, vk = T.axis.remap("SR", [i, k])\n'
        "            with T.init():\n"
        "                s2[vi] = T.float32(0)\n"
        "            s2[vi] = s2[vi] + A[vi, vk] * A[vi, vk]\n"
        f"    for i, k in T.grid({n}, {m}):\n"
        '        with T.block("norm"):\n'
        '            vi, vk = T.axis.remap("SS", [i, k])\n'
        f"            B[vi, vk] = (A[vi, vk] - s1[vi] * T.float32({1.0 / m!r})) * T.rsqrt("
        f"s2[vi] * T.float32({1.0 / m!r}) - s1[vi] * T.float32({1.0 / m!r}) * s1[vi] * "
        f"T.float32({1.0 / m!r}) + T.float32(1e-5)) * G[vk] + Bt[vk]\n"
    )
    c = _c_head("layernorm", ["A", "G", "Bt", "B"]) + (
        f"  for (int i = 0; i < {n}; i++) {{\n    float s1 = 0, s2 = 0;\n"
        f"    for (int k = 0; k < {m}; k++) s1 += A[i*{m}+k];\n"
        f"    for (int k = 0; k < {m}; k++) s2 += A[i*{m}+k] * A[i*{m}+k];\n"
        f"    float mean = s1 * {1.0 / m!r}f, r = 1.0f / sqrtf(s2 * {1.0 / m!r}f - mean * mean "
        "+ 1e-5f);\n"
        f"    for (int k = 0; k < {m}; k++) B[i*{m}+k] = (A[i*{m}+k] - mean) * r * G[k] + Bt[k];\n"
        "  }\n}\n"
    )

    def reference(a, g, b):
        mean = a.mean(axis=1, keepdims=True)
        var = (a * a).mean(axis=1, keepdims=True) - mean * mean
        return (a - mean) / np.sqrt(var + 1e-5) * g + b

    return Workload("layernorm", tir, c, ((n, m), (m,), (m,), (n, m)), reference, 8.0 * n * m, True)


def transpose(n=2048, m=2048) -> Workload:
    tir = _head("transpose", [("A", (n, m)), ("B", (m, n))]) + (
        f"    for i, j in T.grid({m}, {n}):\n"
        '        with T.block("B"):\n'
        '            vi, vj = T.axis.remap("SS", [i, j])\n'
        "            B[vi, vj] = A[vj, vi]\n"
    )
    c = _c_head("transpose", "AB") + (
        f"  for (int i = 0; i < {m}; i++) for (int j = 0; j < {n}; j++) "
        f"B[i*{n}+j] = A[j*{m}+i];\n}}\n"
    )
    return Workload("transpose", tir, c, ((n, m), (m, n)), lambda a: np.ascontiguousarray(a.T), 0.0)


def all_workloads(scale: float = 1.0) -> list[Workload]:
    """Every workload; ``scale`` < 1 shrinks the sizes (tests)."""

    def s(x, lo=4):
        return max(lo, int(x * scale))

    return [
        matmul(s(128, 8), s(128, 8), s(128, 8), relu=True),
        conv2d(s(64), s(64), s(56, 6), s(56, 6)),
        softmax(s(4096, 8), s(1024, 8)),
        matmul(s(1024, 8), s(1024, 8), s(1024, 8)),
        batch_matmul(s(16, 2), s(256, 8), s(256, 8), s(256, 8)),
        depthwise_conv2d(s(64), s(56, 6), s(56, 6)),
        layernorm(s(4096, 8), s(1024, 8)),
        transpose(s(2048, 8), s(2048, 8)),
        dense(1, s(1024, 8), s(4096, 8)),
    ]
