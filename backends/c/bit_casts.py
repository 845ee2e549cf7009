"""C for the calls that read a value's bits: ``reinterpret`` and the bfloat16
conversions of :mod:`tilelang.transform.legalize_bf16`.

Each becomes a call of a small ``static inline`` helper, emitted once per module. The
bits are read through a union (defined behaviour in C, unlike a pointer cast). A
bfloat16 is the top half of a float32; rounding to it adds ``0x7FFF`` plus the lowest
kept bit (to nearest, ties to even); NaN is tested on the bits, since fast-math flags
may fold ``isnan`` away, and kept quiet.
"""

from __future__ import annotations

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir.op import reinterpret_problem

BIT_CALLS = ("bf16_to_float", "float_to_bf16", "reinterpret")
BIT_HELPER_PREFIXES = ("tl_bf16", "tl_reinterpret:")

_BF16_SUPPORT = """\
static inline float tl_bf16_to_float(uint16_t bits) {
  union { uint32_t u; float f; } v;
  v.u = (uint32_t)bits << 16;
  return v.f;
}
static inline uint16_t tl_float_to_bf16(float value) {
  union { uint32_t u; float f; } v;
  v.f = value;
  if ((v.u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((v.u >> 16) | 0x40u);
  return (uint16_t)((v.u + 0x7FFFu + ((v.u >> 16) & 1u)) >> 16);
}"""


def _reinterpret_name(dst: str, src: str) -> str:
    def word(ctype):
        return ctype.strip("_").removesuffix("_t")

    return f"tl_reinterpret_{word(dst)}_from_{word(src)}"


def print_bit_call(printer, op: E.Call) -> str:
    """The C text of ``op`` (one of :data:`BIT_CALLS`); records the helper it needs."""
    arg = printer.expr(op.args[0])
    if op.op != "reinterpret":
        printer.helpers.add("tl_bf16")
        return f"tl_{op.op}({arg})"
    problem = reinterpret_problem(op)
    if problem is not None:
        raise BuildError(f"{type(printer).__name__} cannot print {problem}")
    dst, src = printer.type_name(op.dtype), printer.type_name(op.args[0].dtype)
    printer.helpers.add(f"tl_reinterpret:{dst}:{src}")
    return f"{_reinterpret_name(dst, src)}({arg})"


def bit_helper(name: str) -> str:
    """The C definition of a helper recorded by :func:`print_bit_call`."""
    if name == "tl_bf16":
        return _BF16_SUPPORT
    _, dst, src = name.split(":")
    return (
        f"static inline {dst} {_reinterpret_name(dst, src)}({src} x) {{\n"
        f"  union {{ {src} from; {dst} to; }} v;\n"
        f"  v.from = x;\n"
        f"  return v.to;\n"
        f"}}"
    )
