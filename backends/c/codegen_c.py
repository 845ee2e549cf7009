"""C source for a lowered IRModule: includes, helpers, extern prototypes, functions.

Each PrimFunc becomes ``void name(float* restrict A, ..., int32_t n)``: one pointer per
buffer parameter (``const`` when the function never writes it, ``restrict`` under
``tir.noalias``), the scalar parameters, then the ``tl.size_vars`` (docs/lowered_ir.md).
"""

from __future__ import annotations

import attrs
from tilelang.backends.c.bit_casts import BIT_HELPER_PREFIXES, bit_helper
from tilelang.backends.c.c_printer import CLikePrinter
from tilelang.backends.c.literals import c_header_name
from tilelang.backends.c.names import ScopedNames, export_symbols, is_identifier, sanitize
from tilelang.backends.c.parallel import outline_parallel_for

from tilelang.errors import BuildError
from tilelang.ir import stmt as S
from tilelang.ir.function import PrimFunc
from tilelang.runtime.args import written_data_vars
from tilelang.transform.legalize_bf16 import legalize_bf16_module
from tilelang.transform.verify_lowered import verify_lowered

# C library functions that the standard headers already declare (no prototype).
_DECLARED = frozenset(
    """abs labs llabs fabs fabsf sqrt sqrtf exp expf exp2 exp2f log logf log2 log2f log10
    log10f log1p log1pf pow powf sin sinf cos cosf tan tanf tanh tanhf sinh sinhf cosh
    coshf asin asinf acos acosf atan atanf atan2 atan2f erf erff floor floorf ceil ceilf
    round roundf trunc truncf nearbyint nearbyintf fmod fmodf fmin fminf fmax fmaxf asinh asinhf
    acosh acoshf atanh atanhf hypot hypotf copysign copysignf nextafter nextafterf malloc
    free memcpy memset printf""".split()
)

_HELPER_TEMPLATES = {
    "floordiv": (
        "static inline {t} tl_floordiv_{t}({t} a, {t} b) {{\n"
        "  {t} q = a / b, r = a % b;\n"
        "  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;\n"
        "}}"
    ),
    "floormod": (
        "static inline {t} tl_floormod_{t}({t} a, {t} b) {{\n"
        "  {t} r = a % b;\n"
        "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
        "}}"
    ),
    "min": "static inline {t} tl_min_{t}({t} a, {t} b) {{ return a < b ? a : b; }}",
    "max": "static inline {t} tl_max_{t}({t} a, {t} b) {{ return a > b ? a : b; }}",
}

_ERROR_SUPPORT = """\
static const char* tl_error_message = 0;
static int64_t tl_error_values[TL_ERROR_VALUES];
static int tl_error_count = 0;
static void tl_set_error(const char* message) {
  if (!tl_error_message) tl_error_message = message;
}
/* A failed bounds check: its site and the values it reports (first failure wins). */
static void tl_set_error_values(const char* message, int count, const int64_t* values) {
#pragma omp critical(tl_error)
  if (!tl_error_message) {
    for (int i = 0; i < count && i < TL_ERROR_VALUES; ++i) tl_error_values[i] = values[i];
    tl_error_count = count < TL_ERROR_VALUES ? count : TL_ERROR_VALUES;
    tl_error_message = message;
  }
}
/* The first failed assertion since the last call (the runtime raises it). */
const char* tilelang_last_error(void) {
  const char* message = tl_error_message;
  tl_error_message = 0;
  return message;
}
/* The values recorded with it (copied to out); their number. */
int tilelang_last_error_values(int64_t* out) {
  for (int i = 0; i < tl_error_count; ++i) out[i] = tl_error_values[i];
  return tl_error_count;
}""".replace("TL_ERROR_VALUES", str(2 * 8))

ERROR_SYMBOL = "tilelang_last_error"
ERROR_VALUES_SYMBOL = "tilelang_last_error_values"
#: at most this many values travel with a failed check (an 8-d access)
MAX_ERROR_VALUES = 16


class CPrinter(CLikePrinter):
    """The C99 dialect: the defaults of :class:`CLikePrinter`, with top-level parallel
    loops printed as calls of functions of their own (see :mod:`.parallel`), and calls
    between the module's functions (``call_tir``) as plain C calls of their symbols."""

    # (function name -> C symbol, the set of names called), given by generate_c
    module_calls: tuple | None = None

    def __init__(self, names: ScopedNames, num_threads: int | None = None):
        super().__init__(names, num_threads)
        self.function_symbol: str | None = None
        self.outlined: list[str] = []  # functions printed before the current one
        self.num_outlined = 0
        self.const_pointers: set[int] = set()  # id(data var) of read-only parameters
        self.distinct_pointers: set[int] = set()  # restrict parameters, own allocations

    def visit_call(self, op):
        if op.op != "call_tir":
            return super().visit_call(op)
        if self.module_calls is None:
            raise BuildError("a call of another function needs the whole module")
        symbols, callees = self.module_calls
        callees.add(op.args[0].value)
        return f"{symbols[op.args[0].value]}({', '.join(self.expr(a) for a in op.args[1:])})"

    def visit_for(self, op: S.For) -> None:
        if (
            op.kind is S.ForKind.PARALLEL
            and self.parallel_pragma
            and self.function_symbol is not None
            and not (self.in_parallel or self.in_simd)
        ):
            threads = f" num_threads({self.num_threads})" if self.num_threads else ""
            outline_parallel_for(self, op, self.parallel_pragma + threads)
            return
        super().visit_for(op)

    def visit_allocate(self, op: S.Allocate) -> None:
        self.distinct_pointers.add(id(op.buffer_var))
        super().visit_allocate(op)


@attrs.frozen
class CSource:
    """Generated C: the text, each function's exported symbol, and its prototype."""

    text: str
    symbols: dict  # name in the IRModule -> C symbol
    prototypes: dict  # name in the IRModule -> "void f(...)"
    has_asserts: bool


def generate_c(mod, target, extern_headers=(), printer_class=CPrinter) -> CSource:
    """The C source of every PrimFunc in the lowered module ``mod``."""
    funcs = [(name, f) for name, f in mod if isinstance(f, PrimFunc)]
    if not funcs:
        raise BuildError("the module has no PrimFunc to compile")
    verify_lowered(mod, target.kind)
    mod = legalize_bf16_module(mod)
    funcs = [(name, f) for name, f in mod if isinstance(f, PrimFunc)]
    symbols = export_symbols(funcs, reserved=(ERROR_SYMBOL, ERROR_VALUES_SYMBOL))
    bodies, prototypes, helpers, externs, asserts = [], {}, set(), {}, False
    callees = set()
    for name, func in funcs:
        printer = printer_class(ScopedNames(set(symbols.values())), target.num_cores)
        printer.module_calls = (symbols, callees)
        prototypes[name] = print_function(printer, symbols[name], func)
        bodies.append("\n".join([*getattr(printer, "outlined", ()), *printer.lines]))
        helpers |= printer.helpers
        for extern, signature in printer.externs.items():
            externs.setdefault(extern, signature)
        asserts |= printer.has_asserts
    parts = [_includes(extern_headers)]
    helper_text = [_helper(h) for h in sorted(helpers) if h.startswith("tl_")]
    if helper_text:
        parts.append("\n\n".join(helper_text))
    if asserts:
        parts.append(_ERROR_SUPPORT)
    if externs and not extern_headers:
        declarations = [
            _prototype(name, ret, args, printer_class)
            for name, (ret, args) in externs.items()
            if name not in _DECLARED
        ]
        if declarations:
            parts.append("\n".join(declarations))
    if callees:  # functions calling each other, in any order
        parts.append("\n".join(f"{prototypes[name]};" for name in sorted(callees)))
    parts.extend(bodies)
    return CSource("\n\n".join(parts) + "\n", symbols, prototypes, asserts)


def _includes(extern_headers) -> str:
    lines = [f"#include <{h}>" for h in ("math.h", "stdbool.h", "stdint.h", "stdlib.h")]
    lines += [f"#include {c_header_name(header)}" for header in extern_headers]
    return "\n".join(lines)


def _helper(name: str) -> str:
    if name.startswith(BIT_HELPER_PREFIXES):
        return bit_helper(name)
    _, kind, ctype = name.split("_", 2)
    return _HELPER_TEMPLATES[kind].format(t=ctype)


def _prototype(name, ret_dtype, arg_types, printer_class) -> str:
    ret = "void" if ret_dtype.is_handle() else printer_class.type_names[str(ret_dtype)]
    return f"extern {ret} {name}({', '.join(arg_types) or 'void'});"


def function_params(printer: CLikePrinter, func: PrimFunc) -> list[str]:
    """The C parameter declarations, naming each buffer after the buffer itself."""
    written = written_data_vars(func)
    restrict = f" {printer.restrict_keyword}" if func.attrs.get("tir.noalias") else ""
    params = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            name = printer.names.define(param)
            params.append(f"{printer.type_name(param.dtype)} {name}")
            continue
        name = printer.names.define(buffer.data, buffer.name)
        printer.names.alias(param, name)
        printer.pointer_types[id(buffer.data)] = buffer.dtype.element_of()
        const = "" if id(buffer.data) in written else "const "
        params.append(f"{const}{printer.type_name(buffer.dtype)}*{restrict} {name}")
        if const:
            getattr(printer, "const_pointers", set()).add(id(buffer.data))
        if restrict:
            getattr(printer, "distinct_pointers", set()).add(id(buffer.data))
    for var in func.attrs.get("tl.size_vars", ()):
        params.append(f"{printer.type_name(var.dtype)} {printer.names.define(var)}")
    return params


def print_function(printer: CLikePrinter, symbol: str, func: PrimFunc) -> str:
    """Print ``func`` into ``printer.lines``; returns its prototype."""
    if not is_identifier(symbol):
        raise BuildError(f"invalid C function name {symbol!r}")
    if hasattr(printer, "function_symbol"):
        printer.function_symbol = symbol
    prototype = f"void {symbol}({', '.join(function_params(printer, func)) or 'void'})"
    printer.enter(prototype)
    printer.visit(func.body)
    printer.level -= 1
    printer.emit("}")
    return prototype


def header_text(source: CSource, guard: str) -> str:
    """A C header declaring every exported function (usable from C and C++)."""
    guard = sanitize(guard).upper() + "_H"
    lines = [
        f"#ifndef {guard}",
        f"#define {guard}",
        "#include <stdbool.h>",
        "#include <stdint.h>",
        "#ifdef __cplusplus",
        "#define restrict __restrict__",
        'extern "C" {',
        "#endif",
        "",
        *(f"{p};" for p in source.prototypes.values()),
        "",
        "#ifdef __cplusplus",
        "}",
        "#endif",
        f"#endif /* {guard} */",
    ]
    return "\n".join(lines) + "\n"
