"""mma.sync fragments in CUDA: warp registers, ``ldmatrix`` and ``mma.m16n8k16``.

A buffer in scope ``m16n8k16.matrixA`` / ``matrixB`` / ``matrixC`` holds 16x16 tiles;
each lane keeps 8 values of every tile in a register array (``half A_frag[8 * tiles]``
or ``float C_frag[8 * tiles]``, tile ``i`` at ``[8 i, 8 i + 8)``). Which element of a
tile a lane's value ``r`` is follows PTX's fragment layouts for ``mma.m16n8k16`` with
``g = lane / 4`` and ``t = lane % 4`` (:func:`element`):

- A (16 x 16, row): ``(g + 8 ((r / 2) % 2), 2 t + r % 2 + 8 (r / 4))``;
- B (16 x 16 as two 16 x 8 halves, col): ``(2 t + r % 2 + 8 ((r % 4) / 2), 8 (r / 4) + g)``;
- C (two 16 x 8 halves): ``(g + 8 ((r % 4) / 2), 8 (r / 4) + 2 t + r % 2)``.

A tile is loaded from shared memory by one ``ldmatrix.x4``: lane ``l`` gives the
address of row ``l % 8`` of 8x8 matrix ``l / 8``; matrix ``q`` lands in every lane's
register ``q`` (:func:`ldmatrix_row` says which row of memory lane ``l`` addresses); a row-major B
(``B[k, j]``) and a column-major A are loaded ``.trans``. A load from any other scope
(or of an accumulator) and every store go element by element through :func:`element`.
One ``tvm_mma_sync`` is two ``mma.sync.aligned.m16n8k16.row.col`` (columns 0-7, 8-15).
"""

from __future__ import annotations

from tilelang.analysis.fragments import FRAGMENT_KINDS, LAYOUTS, MMA_SHAPE
from tilelang.errors import BuildError
from tilelang.ir import expr as E

#: values per lane per 16x16 tile
PER_LANE = 8
KIND_CODES = {"matrix_a": 0, "matrix_b": 1, "accumulator": 2}


def element(kind: str, lane: int, r: int) -> tuple[int, int]:
    """``(row, col)`` in its 16x16 tile of value ``r`` of ``lane`` (the module docstring's
    table; the CUDA helper ``tl_mma_element`` computes the same)."""
    g, t = lane // 4, lane % 4
    if kind == "matrix_a":
        return g + 8 * (r // 2 % 2), 2 * t + r % 2 + 8 * (r // 4)
    if kind == "matrix_b":
        return 2 * t + r % 2 + 8 * (r % 4 // 2), 8 * (r // 4) + g
    return g + 8 * (r % 4 // 2), 8 * (r // 4) + 2 * t + r % 2


def ldmatrix_trans(kind: str, col_major: bool) -> bool:
    """Whether ``ldmatrix`` must transpose: a lane's pair of values runs along k, which
    is across memory rows when A is column-major (``[k][i]``) or B row-major (``[k][j]``)."""
    return col_major if kind == "matrix_a" else not col_major


def ldmatrix_row(kind: str, col_major: bool) -> tuple[str, str]:
    """C expressions in ``lane`` of the memory ``(row, col)``, relative to the tile's
    origin, of the 8 halves whose address ``lane`` gives to ``ldmatrix.x4``: lane ``l``
    addresses row ``l % 8`` of matrix ``l / 8``, and matrix ``q`` lands in every lane's
    register ``q``, which must hold its values ``2 q`` and ``2 q + 1`` (:func:`element`):
    the 8x8 block at tile rows ``8 (q % 2)`` (A's i, B's k) and columns ``8 (q / 2)``.
    Memory is A ``[i][k]``, B ``[k][j]``, or the transpose with ``col_major``."""
    if ldmatrix_trans(kind, col_major) == (kind == "matrix_b"):  # memory rows: i or k
        return "(lane % 16)", "(8 * (lane / 16))"
    return "(lane % 8 + 8 * (lane / 16))", "(8 * (lane / 8 % 2))"  # rows: k (A) / j (B)


def matrix_sources(body) -> set:
    """Ids of the data variables fragment loads read (``ldmatrix`` rows and WMMA
    pointers must be 16-byte aligned: their shared arrays are declared aligned)."""
    from tilelang.ir.functor import post_order_visit

    found: set = set()

    def visit(node):
        if isinstance(node, E.Call) and node.op == "tvm_load_matrix_sync":
            pointer = node.args[5]
            if isinstance(pointer, E.Call) and pointer.op == "tvm_access_ptr":
                found.add(id(pointer.args[1]))

    post_order_visit(body, visit)
    return found


def declaration(printer, op, fragment, count) -> str:
    """The register array a ``m16n8k16.*`` allocation is."""
    name = op.buffer_var.name
    if fragment is None:
        raise BuildError(
            f"{op.scope} buffer {name} is never used by a fragment intrinsic "
            "(tensorize its loads, stores and updates with the mma_* intrinsics)"
        )
    if fragment.shape != MMA_SHAPE:
        raise BuildError(f"{op.scope} buffer {name}: mma fragments are 16x16x16 tiles")
    if not isinstance(count, int) or count % 256:
        raise BuildError(f"{op.scope} buffer {name} holds {count} elements, not 16x16 tiles")
    return f"__align__(16) {printer.type_name(op.dtype)} {{name}}[{count // 256 * PER_LANE}]"


def print_call(printer, op: E.Call, scopes: dict) -> str:
    """The helper call one fragment intrinsic on ``m16n8k16.*`` registers prints as
    (``scopes``: id(data var) -> scope of the kernel's allocations)."""
    args = op.args

    def regs(var, index):
        offset = printer._strip(printer.expr(index))
        return f"({printer.expr(var)} + ({offset}) * {PER_LANE})"

    if op.op == "tvm_fill_fragment":
        printer.mma_helpers.add("fill")
        return f"tl_mma_fill({regs(args[0], args[4])}, {printer.expr(args[5])})"
    if op.op == "tvm_mma_sync":
        d, a, b, c = (regs(args[i], args[i + 1]) for i in (0, 2, 4, 6))
        dtype = str(printer.fragment_dtypes[id(args[0])])
        inputs = {str(printer.fragment_dtypes[id(args[i])]) for i in (2, 4)}
        helper = _MMA_HELPERS.get((inputs.pop() if len(inputs) == 1 else None, dtype))
        if helper is None:
            raise BuildError(
                f"mma.sync multiplies float16 into float32 or float16, or bfloat16 into "
                f"float32; not {' and '.join(sorted(inputs))} into {dtype}"
            )
        printer.mma_helpers.add(helper)
        return f"tl_{helper}({d}, {a}, {b}, {c})"
    layout = args[7]
    if not isinstance(layout, E.StringImm) or layout.value not in LAYOUTS:
        raise BuildError(f"a fragment's memory layout is one of {LAYOUTS}")
    col_major = layout.value == "col_major"
    pointer = printer._strip(printer.expr(args[5]))
    stride = printer._strip(printer.expr(args[6]))
    kind = printer.fragment_kind(args[0])
    frag = regs(args[0], args[4])
    flag = "true" if col_major else "false"
    if op.op == "tvm_store_matrix_sync":
        printer.mma_helpers.add("elementwise")
        return f"tl_mma_store({KIND_CODES[kind]}, {frag}, {pointer}, {stride}, {flag})"
    source = args[5]
    shared = (
        isinstance(source, E.Call)
        and source.op == "tvm_access_ptr"
        and scopes.get(id(source.args[1])) == "shared"
    )
    if kind == "accumulator" or not shared:
        printer.mma_helpers.add("elementwise")
        return f"tl_mma_load({KIND_CODES[kind]}, {frag}, {pointer}, {stride}, {flag})"
    row, col = ldmatrix_row(kind, col_major)
    printer.mma_helpers.add("ldmatrix")
    trans = "_trans" if ldmatrix_trans(kind, col_major) else ""
    row, col = (text.replace("lane", "(int)tl_lane()") for text in (row, col))
    address = f"({pointer}) + {row} * ({stride}) + {col}"
    return f"tl_ldmatrix_x4{trans}({frag}, {address})"


_LANE = """static __device__ __forceinline__ unsigned tl_lane() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;\\n" : "=r"(lane));  // constant per thread: may be reused
  return lane;
}"""

_ELEMENT = """// (row, col) in its 16x16 tile of value r of this lane (PTX mma.m16n8k16 layouts)
static __device__ __forceinline__ void tl_mma_element(int kind, int r, int* row, int* col) {
  int g = (int)tl_lane() / 4, t = (int)tl_lane() % 4;
  if (kind == 0) { *row = g + 8 * (r / 2 % 2); *col = 2 * t + r % 2 + 8 * (r / 4); }
  else if (kind == 1) { *row = 2 * t + r % 2 + 8 * (r % 4 / 2); *col = 8 * (r / 4) + g; }
  else { *row = g + 8 * (r % 4 / 2); *col = 8 * (r / 4) + 2 * t + r % 2; }
}"""

_FILL = """template <typename F, typename V>
static __device__ __forceinline__ void tl_mma_fill(F* regs, V value) {
#pragma unroll
  for (int r = 0; r < 8; ++r) regs[r] = (F)value;
}"""

_ELEMENTWISE = """template <typename F, typename M>
static __device__ __forceinline__ void tl_mma_load(int kind, F* regs, const M* memory,
                                                   int stride, bool col_major) {
#pragma unroll
  for (int r = 0; r < 8; ++r) {
    int row, col;
    tl_mma_element(kind, r, &row, &col);
    regs[r] = (F)memory[col_major ? col * stride + row : row * stride + col];
  }
}
template <typename F, typename M>
static __device__ __forceinline__ void tl_mma_store(int kind, const F* regs, M* memory,
                                                    int stride, bool col_major) {
#pragma unroll
  for (int r = 0; r < 8; ++r) {
    int row, col;
    tl_mma_element(kind, r, &row, &col);
    memory[col_major ? col * stride + row : row * stride + col] = (M)regs[r];
  }
}"""


def _ldmatrix(trans: bool) -> str:
    # 16-bit elements moved as bits: one helper for half and __nv_bfloat16
    suffix, mode = ("_trans", ".trans") if trans else ("", "")
    return (
        "template <typename H>\n"
        f"static __device__ __forceinline__ void tl_ldmatrix_x4{suffix}(H* regs, "
        "const H* row) {\n"
        '  static_assert(sizeof(H) == 2, "ldmatrix moves 16-bit elements");\n'
        "  unsigned address = (unsigned)__cvta_generic_to_shared(row);\n"
        "  unsigned* r = reinterpret_cast<unsigned*>(regs);\n"
        f'  asm volatile("ldmatrix.sync.aligned.m8n8.x4{mode}.shared.b16 '
        '{%0, %1, %2, %3}, [%4];\\n"\n'
        '               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address));\n'
        "}"
    )


_MMA_F32 = """// D = A B + C on a 16x16x16 tile: two m16n8k16 (B's and C's columns 0-7, then 8-15)
static __device__ __forceinline__ void tl_{name}(float* d, const {half}* a,
                                                 const {half}* b, const float* c) {{
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B = reinterpret_cast<const unsigned*>(b);
#pragma unroll
  for (int h = 0; h < 2; ++h) {{
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.{ptx}.{ptx}.f32 {{%0, %1, %2, %3}}, "
        "{{%4, %5, %6, %7}}, {{%8, %9}}, {{%10, %11, %12, %13}};\\n"
        : "=f"(d[4 * h]), "=f"(d[4 * h + 1]), "=f"(d[4 * h + 2]), "=f"(d[4 * h + 3])
        : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[2 * h]), "r"(B[2 * h + 1]),
          "f"(c[4 * h]), "f"(c[4 * h + 1]), "f"(c[4 * h + 2]), "f"(c[4 * h + 3]));
  }}
}}"""

_MMA_F16 = """// D = A B + C on a 16x16x16 tile, half accumulators: two m16n8k16
static __device__ __forceinline__ void tl_mma_16x16x16_f16_f16(half* d, const half* a,
                                                           const half* b, const half* c) {
  const unsigned* A = reinterpret_cast<const unsigned*>(a);
  const unsigned* B = reinterpret_cast<const unsigned*>(b);
  const unsigned* C = reinterpret_cast<const unsigned*>(c);
  unsigned* D = reinterpret_cast<unsigned*>(d);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, "
        "{%2, %3, %4, %5}, {%6, %7}, {%8, %9};\\n"
        : "=r"(D[2 * h]), "=r"(D[2 * h + 1])
        : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[2 * h]), "r"(B[2 * h + 1]),
          "r"(C[2 * h]), "r"(C[2 * h + 1]));
  }
}"""


def helpers(used: set) -> list[str]:
    """The device helpers the calls printed with ``used`` need, in dependency order."""
    if not used:
        return []
    parts = [_LANE]
    if "elementwise" in used:
        parts += [_ELEMENT, _ELEMENTWISE]
    if "fill" in used:
        parts.append(_FILL)
    if "ldmatrix" in used:
        parts += [_ldmatrix(False), _ldmatrix(True)]
    if "mma_16x16x16_f16_f32" in used:
        parts.append(_MMA_F32.format(name="mma_16x16x16_f16_f32", half="half", ptx="f16"))
    if "mma_16x16x16_bf16_f32" in used:
        parts.append(
            _MMA_F32.format(name="mma_16x16x16_bf16_f32", half="__nv_bfloat16", ptx="bf16")
        )
    if "mma_16x16x16_f16_f16" in used:
        parts.append(_MMA_F16)
    return parts


#: (input dtype, accumulator dtype) -> the helper (and the name it has with ``tl_``)
_MMA_HELPERS = {
    ("float16", "float32"): "mma_16x16x16_f16_f32",
    ("bfloat16", "float32"): "mma_16x16x16_bf16_f32",
    ("float16", "float16"): "mma_16x16x16_f16_f16",
}


__all__ = [
    "element", "ldmatrix_row", "ldmatrix_trans", "declaration", "print_call", "helpers",
    "matrix_sources",
    "PER_LANE", "FRAGMENT_KINDS",
]  # fmt: skip
