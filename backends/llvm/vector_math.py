"""Float math as inline LLVM IR: exp, exp2, log, log2, log10, tanh, sigmoid, erf, pow.

LLVM has no vector ``exp``: without a vector math library it splits
``llvm.exp.v16f32`` into sixteen calls of libm's ``expf``, and a loop whose body calls
``expf`` is not vectorised at all. So float32 (and float16, computed in float32) math
is emitted here as IR of our own: one internal ``alwaysinline`` function per function
and type (``__tilelang_exp_v16f32``, ``__tilelang_exp_f32``...), made only of
arithmetic, compares, selects and bit casts. The explicit vectoriser's vector calls
therefore become straight vector code, and a scalar loop calling the scalar kernel is
widened by LLVM's loop vectoriser after inlining. float64 keeps LLVM's intrinsics
(libm).

Accuracy (float32, round to nearest, against a float64 reference; measured over the
whole float32 range, specials, denormals included, by tests/test_llvm_vector_math.py):
every kernel is within 2 ulp, most within 1 (the docstrings give the measured figure).
Every IEEE special case follows C99 Annex F (``exp(-inf) = 0``, ``log(-1) = nan``,
``pow(-8, 1/3) = nan``, ``pow(nan, 0) = 1``...). ``-fast-math`` does not change them.

The methods are the classical ones: Cody-Waite range reduction (``x = k ln2 + r`` with
``ln2`` split so that ``k * ln2_hi`` is exact), polynomials fitted to the reduced
interval (weighted least squares iterated towards the minimax fit, coefficients rounded
to float32 one at a time, the later ones refitted), scaling by ``2^k`` built in the
exponent bits and split in two steps so that results reach the denormals and overflow
exactly. ``pow`` works in float64 (``exp2(y log2 |x|)``, then one rounding), because
float32 ``log`` loses the bits that a large ``y`` magnifies.
"""

from __future__ import annotations

import math

from llvmlite import ir

from .types import I32, I64

#: functions with a kernel here
FUNCTIONS = ("exp", "exp2", "log", "log2", "log10", "tanh", "sigmoid", "erf", "pow")

_F32, _F64 = ir.FloatType(), ir.DoubleType()
_ARITY = {"pow": 2}


def has_kernel(name: str, dtype) -> bool:
    """True when ``name`` on ``dtype`` (any lanes) is emitted inline here."""
    return name in FUNCTIONS and dtype.element_of().is_float() and dtype.bits in (16, 32)


def emit(emitter, name: str, dtype, args):
    """``name(*args)`` at ``dtype`` (float16/float32, scalar or vector) as a call of the
    inline kernel (float16 converts to float32 and back)."""
    b = emitter.builder
    lanes = dtype.lanes
    compute = _F32 if lanes == 1 else ir.VectorType(_F32, lanes)
    if dtype.bits == 16:
        args = [b.fpext(a, compute) for a in args]
    fn = kernel_function(emitter.module, name, compute)
    result = b.call(fn, args)
    return b.fptrunc(result, _llvm(dtype)) if dtype.bits == 16 else result


def _llvm(dtype):
    half = ir.HalfType()
    return half if dtype.lanes == 1 else ir.VectorType(half, dtype.lanes)


def kernel_function(module: ir.Module, name: str, ftype) -> ir.Function:
    """The internal always-inline function computing ``name`` on ``ftype``, made once per
    module."""
    suffix = f"v{ftype.count}f32" if isinstance(ftype, ir.VectorType) else "f32"
    symbol = f"__tilelang_{name}_{suffix}"
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    fn = ir.Function(module, ir.FunctionType(ftype, [ftype] * _ARITY.get(name, 1)), symbol)
    fn.linkage = "internal"
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    k = Kernel(ir.IRBuilder(fn.append_basic_block("entry")), ftype)
    k.b.ret(_KERNELS[name](k, *fn.args))
    return fn


class Kernel:
    """Arithmetic on one float type (float or double, scalar or vector): constants are
    splatted, ``fma`` is ``llvm.fmuladd`` (fused where the target has FMA)."""

    def __init__(self, builder: ir.IRBuilder, ftype):
        self.b = builder
        self.ftype = ftype
        self.lanes = ftype.count if isinstance(ftype, ir.VectorType) else 0
        element = ftype.element if self.lanes else ftype
        self.double = isinstance(element, ir.DoubleType)
        self.ibits = 64 if self.double else 32
        self.mant = 52 if self.double else 23
        iscalar = I64 if self.double else I32
        self.itype = ir.VectorType(iscalar, self.lanes) if self.lanes else iscalar

    def with_type(self, element) -> Kernel:
        """A kernel on the same lanes of another element type."""
        ftype = ir.VectorType(element, self.lanes) if self.lanes else element
        return Kernel(self.b, ftype)

    # ------------------------------------------------------------- values
    def c(self, value: float):
        return self._splat(self.ftype, float(value))

    def ci(self, value: int):
        return self._splat(self.itype, int(value))

    def _splat(self, ty, value):
        if isinstance(ty, ir.VectorType):
            return ir.Constant(ty, [ir.Constant(ty.element, value)] * ty.count)
        return ir.Constant(ty, value)

    def intrinsic(self, name, *args):
        ty = args[0].type
        suffix = _suffix(ty)
        module = self.b.module
        full_name = f"{name}.{suffix}"
        fn = module.globals.get(full_name)
        if fn is None:
            fn = ir.Function(module, ir.FunctionType(ty, [a.type for a in args]), full_name)
        return self.b.call(fn, args)

    # ------------------------------------------------------------- arithmetic
    def add(self, a, b):
        return self.b.fadd(a, b)

    def sub(self, a, b):
        return self.b.fsub(a, b)

    def mul(self, a, b):
        return self.b.fmul(a, b)

    def div(self, a, b):
        return self.b.fdiv(a, b)

    def fma(self, a, b, c):
        return self.intrinsic("llvm.fmuladd", a, b, c)

    def poly(self, x, coeffs):
        """``coeffs[0] + coeffs[1] x + ...`` by Horner's rule."""
        acc = self.c(coeffs[-1])
        for coeff in reversed(coeffs[:-1]):
            acc = self.fma(acc, x, self.c(coeff))
        return acc

    def abs(self, x):
        return self.intrinsic("llvm.fabs", x)

    def copysign(self, magnitude, sign):
        return self.intrinsic("llvm.copysign", magnitude, sign)

    # ``b`` when ``a`` is NaN: one minps/maxps on x86 (``llvm.minnum`` needs three)
    def min(self, a, b):
        return self.select(self.cmp("<", a, b), a, b)

    def max(self, a, b):
        return self.select(self.cmp(">", a, b), a, b)

    def select(self, cond, a, b):
        return self.b.select(cond, a, b)

    def cmp(self, op, a, b):
        """An ordered float compare (false when either side is NaN)."""
        return self.b.fcmp_ordered(op, a, b)

    def isnan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    # ------------------------------------------------------------- bits
    def bits(self, x):
        return self.b.bitcast(x, self.itype)

    def from_bits(self, i):
        return self.b.bitcast(i, self.ftype)

    def round_to_int(self, x):
        """``(rint(x), int(rint(x)))`` for ``|x| < 2^22`` (2^51 for double), by the
        shifter trick: adding 1.5 * 2^mant rounds to an integer in the last bits."""
        shifter = self.c(1.5 * 2.0**self.mant)
        shifted = self.add(x, shifter)
        k = self.sub(shifted, shifter)
        return k, self.b.sub(self.bits(shifted), self.bits(shifter))

    def pow2(self, n):
        """``2^n`` for an integer vector ``n`` in the normal exponent range."""
        bias = 1023 if self.double else 127
        return self.from_bits(self.b.shl(self.b.add(n, self.ci(bias)), self.ci(self.mant)))

    def scale(self, x, n):
        """``x * 2^n`` for ``n`` up to about twice the exponent range, rounded once: the
        first half-step is exact, the second rounds into denormals or overflows."""
        half = self.b.ashr(n, self.ci(1))
        return self.mul(self.mul(x, self.pow2(half)), self.pow2(self.b.sub(n, half)))


def _suffix(ty) -> str:
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{_suffix(ty.element)}"
    return {ir.FloatType: "f32", ir.DoubleType: "f64"}[type(ty)]


# ------------------------------------------------------------------ float32 kernels
_LN2_HI, _LN2_LO = 0.693359375, -2.12194440e-4  # ln2_hi has 9 bits: k * ln2_hi is exact
_EXP_P = (0.5, 0.16666579246520996, 0.04166675731539726, 0.008362949825823307,
          0.0013906152453273535)  # fmt: skip
_EXP2_Q = (0.6931471824645996, 0.24022649228572845, 0.05550367385149002,
           0.009618307463824749, 0.0013387389481067657, 0.00015383654681500047)  # fmt: skip
_LOG_P = (0.3333333134651184, -0.24999994039535522, 0.20000699162483215, -0.1666804552078247,
          0.1424967348575592, -0.12420552968978882, 0.11674612760543823, -0.11511237919330597,
          0.07039272040128708)  # fmt: skip


def _exp_hi_lo(k: Kernel, x):
    """``e^x`` for non-NaN ``x`` as ``(hi, lo)`` with ``hi + lo`` twice as precise as
    ``hi``. ``x = n ln2 + r``, ``|r| <= ln2/2``, ``e^r = 1 + r + r^2 P(r)``."""
    xc = k.max(k.min(x, k.c(89.0)), k.c(-104.0))  # beyond: inf / 0
    n_float, n = k.round_to_int(k.mul(xc, k.c(1 / math.log(2))))
    r = k.fma(n_float, k.c(-_LN2_HI), xc)
    r = k.fma(n_float, k.c(-_LN2_LO), r)
    s = k.fma(k.mul(r, r), k.poly(r, _EXP_P), r)
    hi = k.add(s, k.c(1.0))
    lo = k.add(k.sub(k.c(1.0), hi), s)  # the rounding error of hi (|s| < 1)
    return k.scale(hi, n), k.scale(lo, n)


def exp(k: Kernel, x):
    """``e^x``: measured max error 1.01 ulp."""
    hi, _ = _exp_hi_lo(k, x)  # NaN: clamped to 89 in there, replaced here
    return k.select(k.isnan(x), x, hi)


def exp2(k: Kernel, x):
    """``2^x``: measured max error 0.8 ulp. ``x = n + f``, ``|f| <= 1/2``,
    ``2^f = 1 + f Q(f)``."""
    xc = k.max(k.min(x, k.c(129.0)), k.c(-151.0))
    n_float, n = k.round_to_int(xc)
    f = k.sub(xc, n_float)
    result = k.scale(k.fma(f, k.poly(f, _EXP2_Q), k.c(1.0)), n)
    return k.select(k.isnan(x), x, result)


def _log_parts(k: Kernel, x):
    """``(e, L)`` with ``x = 2^e (1 + f)``, ``sqrt(1/2) <= 1 + f < sqrt(2)`` and
    ``L = log(1 + f) = f - f^2/2 + f^3 P(f)``; denormal ``x`` is scaled by 2^23 first."""
    b = k.b
    tiny = k.cmp("<", x, k.c(2.0**-126))
    xs = k.select(tiny, k.mul(x, k.c(2.0**23)), x)
    bits = k.bits(xs)
    offset = b.sub(bits, k.ci(0x3F3504F3))  # bits of sqrt(1/2)
    e = b.ashr(offset, k.ci(23))
    m = k.from_bits(b.sub(bits, b.shl(e, k.ci(23))))
    e = b.sub(e, k.select(tiny, k.ci(23), k.ci(0)))
    f = k.sub(m, k.c(1.0))
    f2 = k.mul(f, f)
    tail = k.fma(k.mul(f2, f), k.poly(f, _LOG_P), k.mul(f2, k.c(-0.5)))
    return b.sitofp(e, k.ftype), k.add(f, tail)


def _log_specials(k: Kernel, x, result):
    """log of 0 is -inf, of a negative number NaN, of +inf +inf, of NaN NaN."""
    result = k.select(k.cmp("==", x, k.c(math.inf)), x, result)
    result = k.select(k.cmp("==", x, k.c(0.0)), k.c(-math.inf), result)
    return k.select(k.b.fcmp_unordered("<", x, k.c(0.0)), k.c(math.nan), result)


def log(k: Kernel, x):
    """Natural log: measured max error 0.8 ulp (``e ln2`` split in two parts)."""
    e, tail = _log_parts(k, x)
    result = k.fma(e, k.c(_LN2_HI), k.fma(e, k.c(_LN2_LO), tail))
    return _log_specials(k, x, result)


def log2(k: Kernel, x):
    """Base-2 log: measured max error 1.6 ulp (the exponent is added exactly)."""
    e, tail = _log_parts(k, x)
    return _log_specials(k, x, k.fma(tail, k.c(1 / math.log(2)), e))


def log10(k: Kernel, x):
    """Base-10 log: measured max error 1.7 ulp."""
    e, tail = _log_parts(k, x)
    hi, lo = 0.30102539, 4.6050389811952e-06  # log10(2) = hi + lo, hi with 15 bits
    result = k.fma(e, k.c(hi), k.fma(tail, k.c(1 / math.log(10)), k.mul(e, k.c(lo))))
    return _log_specials(k, x, result)


_TANH_P = (-0.3333333432674408, 0.13333453238010406, -0.053991351276636124,
           0.02201301045715809, -0.009107370860874653, 0.0031322103459388018)  # fmt: skip


def tanh(k: Kernel, x):
    """Hyperbolic tangent: measured max error 1.5 ulp. ``x + x^3 P(x^2)`` below 0.6,
    ``(1 - e) / (1 + e)`` with ``e = exp(-2|x|)`` above."""
    a = k.abs(x)
    a2 = k.mul(a, a)
    small = k.fma(k.mul(a2, a), k.poly(a2, _TANH_P), a)
    e = exp(k, k.mul(a, k.c(-2.0)))
    large = k.div(k.sub(k.c(1.0), e), k.add(k.c(1.0), e))
    result = k.select(k.cmp("<", a, k.c(0.6)), small, large)
    return k.select(k.isnan(x), x, k.copysign(result, x))


def sigmoid(k: Kernel, x):
    """``1 / (1 + e^-x)``: measured max error 1 ulp. With ``e = e^-|x|``, the result is
    ``1 / (1 + e)`` or, for negative ``x``, ``e / (1 + e)`` (tiny results keep their
    digits); the rounding errors of ``e`` and of ``1 + e`` are carried and corrected
    for after the division."""
    e_hi, e_lo = _exp_hi_lo(k, k.sub(k.c(0.0), k.abs(x)))
    negative = k.cmp("<", x, k.c(0.0))
    num_hi = k.select(negative, e_hi, k.c(1.0))
    num_lo = k.select(negative, e_lo, k.c(0.0))
    d = k.add(k.c(1.0), e_hi)
    d_lo = k.add(k.add(k.sub(k.c(1.0), d), e_hi), e_lo)  # e <= 1: 1 + e = d + d_lo
    q = k.div(num_hi, d)
    residual = k.fma(k.sub(k.c(0.0), q), d, num_hi)  # num_hi - q d, exact with FMA
    correction = k.div(k.fma(k.sub(k.c(0.0), q), d_lo, k.add(residual, num_lo)), d)
    return k.select(k.isnan(x), x, k.add(q, correction))


_ERF_C0_HI, _ERF_C0_LO = 1.128379225730896, -5.863538342219759e-08  # 2 / sqrt(pi)
_ERF_Q = (-0.37612637877464294, 0.1128372773528099, -0.026859499514102936,
          0.005198076367378235, -0.0008084088913165033, 8.055178477661684e-05)  # fmt: skip
#: erfc(x) e^(x^2) on [1, 4] as a polynomial in (x - 2.5)
_ERFC_Q = (0.21080635488033295, -0.07434733957052231, 0.024938276037573814,
           -0.008001702837646008, 0.0024656811729073524, -0.0007330510998144746,
           0.00021339693921618164, -5.9701465943362564e-05, 1.4114781151874922e-05,
           -3.6375379295350285e-06, 1.7179874021167052e-06, -4.486969942263386e-07)  # fmt: skip


def erf(k: Kernel, x):
    """Error function: measured max error 1.2 ulp. ``x (c0 + x^2 Q(x^2))`` below 1,
    ``1 - e^(-x^2) R(x)`` up to 4 (``x^2`` kept exactly as a sum of two floats), 1
    beyond."""
    a = k.abs(x)
    z = k.mul(a, a)
    series = k.fma(a, k.c(_ERF_C0_HI), k.mul(a, k.fma(z, k.poly(z, _ERF_Q), k.c(_ERF_C0_LO))))
    ac = k.min(a, k.c(4.0))
    z_hi = k.mul(ac, ac)
    z_lo = k.fma(ac, ac, k.sub(k.c(0.0), z_hi))  # exact with FMA, 0 without (still 2 ulp)
    gauss = k.mul(exp(k, k.sub(k.c(0.0), z_hi)), k.sub(k.c(1.0), z_lo))
    tail = k.sub(k.c(1.0), k.mul(gauss, k.poly(k.sub(ac, k.c(2.5)), _ERFC_Q)))
    result = k.select(k.cmp("<", a, k.c(1.0)), series, tail)
    return k.select(k.isnan(x), x, k.copysign(result, x))


# ------------------------------------------------------------------ pow, in float64
_LN2 = math.log(2)
_EXP2_TAYLOR = tuple(_LN2**n / math.factorial(n) for n in range(12))


def _log2_f64(k: Kernel, x):
    """log2 of a positive finite normal double, to about 2^-45 relative:
    ``x = 2^e (1 + f)``, ``log(1 + f) = 2 atanh(s)``, ``s = f / (2 + f)``."""
    b = k.b
    bits = k.bits(x)
    offset = b.sub(bits, k.ci(0x3FE6A09E667F3BCD))  # bits of sqrt(1/2)
    e = b.ashr(offset, k.ci(52))
    m = k.from_bits(b.sub(bits, b.shl(e, k.ci(52))))
    f = k.sub(m, k.c(1.0))
    s = k.div(f, k.add(f, k.c(2.0)))
    s2 = k.mul(s, s)
    series = k.poly(s2, tuple(2.0 / (2 * n + 1) for n in range(8)))  # 2 atanh(s) / s
    return k.fma(k.mul(s, series), k.c(1 / _LN2), b.sitofp(e, k.ftype))


def _exp2_f64(k: Kernel, t):
    """2^t for ``|t| <= 300`` to about 2^-45 relative (the float32 result rounds once)."""
    n_float, n = k.round_to_int(t)
    return k.scale(k.poly(k.sub(t, n_float), _EXP2_TAYLOR), n)


def pow(k: Kernel, x, y):
    """``x^y``: measured max error 0.5 ulp. The magnitude is ``exp2(y log2 |x|)`` in
    float64; signs and special cases follow C99 (``pow(x, 0) = pow(1, y) = 1``,
    ``pow(-1, ±inf) = 1``, a negative finite base with a non-integer exponent is NaN,
    an odd integer exponent keeps the base's sign)."""
    b = k.b
    d = k.with_type(_F64)
    xd, yd = b.fpext(x, d.ftype), b.fpext(y, d.ftype)
    ax = d.abs(xd)
    t = d.mul(yd, _log2_f64(d, ax))
    t = d.max(d.min(t, d.c(300.0)), d.c(-300.0))  # NaN (0 * inf) -> 300, fixed below
    magnitude = b.fptrunc(_exp2_f64(d, t), k.ftype)
    # |x| of 0, inf or NaN: the core saw no positive finite normal
    ax32 = k.abs(x)
    y_positive = k.cmp(">", y, k.c(0.0))
    zero_or_inf = k.select(y_positive, k.c(0.0), k.c(math.inf))
    magnitude = k.select(k.cmp("==", ax32, k.c(0.0)), zero_or_inf, magnitude)
    inf_base = k.select(y_positive, k.c(math.inf), k.c(0.0))
    magnitude = k.select(k.cmp("==", ax32, k.c(math.inf)), inf_base, magnitude)
    # |x| and 1 against an infinite exponent
    ay = k.abs(y)
    y_inf = k.cmp("==", ay, k.c(math.inf))
    grows = b.icmp_unsigned("==", k.cmp(">", ax32, k.c(1.0)), y_positive)
    inf_exp = k.select(k.cmp("==", ax32, k.c(1.0)), k.c(1.0), k.select(grows, ay, k.c(0.0)))
    magnitude = k.select(y_inf, inf_exp, magnitude)
    magnitude = k.select(b.or_(k.isnan(x), k.isnan(y)), k.c(math.nan), magnitude)
    # signs: an integer y (|y| >= 2^24 is even), an odd one keeps x's sign
    y_int = k.cmp("==", k.intrinsic("llvm.floor", y), y)
    half = k.mul(y, k.c(0.5))
    y_odd = b.and_(y_int, k.cmp("!=", k.intrinsic("llvm.floor", half), half))
    result = k.select(y_odd, k.copysign(magnitude, x), magnitude)
    negative_finite = b.and_(k.cmp("<", x, k.c(0.0)), k.cmp(">", x, k.c(-math.inf)))
    bad = b.and_(negative_finite, b.and_(b.not_(y_int), b.not_(y_inf)))
    result = k.select(bad, k.c(math.nan), result)
    one = b.or_(k.cmp("==", y, k.c(0.0)), k.cmp("==", x, k.c(1.0)))
    return k.select(one, k.c(1.0), result)


_KERNELS = {
    "exp": exp, "exp2": exp2, "log": log, "log2": log2, "log10": log10, "tanh": tanh,
    "sigmoid": sigmoid, "erf": erf, "pow": pow,
}  # fmt: skip
