"""Vectorised CUDA loads and stores: a ``T.vectorized`` loop whose store (and loads)
move through contiguous, aligned elements prints as 32/64/128-bit accesses
(``float4``, ``uint4``, ...) instead of one scalar access per lane::

    for v in T.vectorized(4):            *(float4*)(B + base_b) = *(const float4*)(A + base_a);
        B[base_b + v] = A[base_a + v] ->

    for v in T.vectorized(4):            {
        C[c + v] = A[a + v] * s            float4 A_v = *(const float4*)(A + a);
                                       ->  float4 C_v;
                                           #pragma unroll
                                           for (int32_t v = 0; v < 4; ++v)
                                             ((float*)&C_v)[v] = ((const float*)&A_v)[v] * s;
                                           *(float4*)(C + c) = C_v;
                                         }

A loop qualifies when its extent is a constant, its body one store to a ``global`` or
``shared`` buffer at ``base + v`` (``v`` the loop variable) with ``lanes * bits`` of 32,
64 or 128 and ``base`` a multiple of the lane count (every coefficient and the constant
of its linear form are: the address is then aligned to the vector's width, given an
aligned buffer). Loads meeting the same conditions are read as vectors; loads that do
not depend on ``v`` stay scalar, and any other load stays per lane. A loop that does not
qualify prints as before (a scalar loop, unrolled).

Alignment: shared arrays accessed so are declared ``__align__(16)``; global buffers must start on a
vector boundary, which the module checks for device arrays passed in place (those it
allocates are aligned); :attr:`VectorPrinter.aligned` records what each buffer needs.
"""

from __future__ import annotations

import attrs
from tilelang.backends.cuda.async_copy import is_async_copy

from tilelang.arith import linear_form, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit, substitute

VECTOR_BYTES = (4, 8, 16)
SCOPES = ("global", "shared")
#: readable vector types where CUDA has them; other element types move as raw words
NAMED = {("float32", 2): "float2", ("float32", 4): "float4", ("int32", 2): "int2",
         ("int32", 4): "int4"}  # fmt: skip
RAW = {4: "uint32_t", 8: "uint2", 16: "uint4"}


@attrs.frozen
class Access:
    """One vector access: the buffer, the index of its first lane and the type."""

    buffer: object
    base: E.PrimExpr
    vector_type: str
    lanes: int


def _uses(expr, var) -> bool:
    found = []
    post_order_visit(expr, lambda n: found.append(n) if n is var else None)
    return bool(found)


def vector_access(buffer, index, var, lanes: int) -> Access | None:
    """The vector access of ``buffer[index]`` over lanes ``var`` in ``[0, lanes)``,
    or None when it is not contiguous and aligned (see the module docstring)."""
    if buffer.scope not in SCOPES or buffer.dtype.lanes != 1 or index.dtype.lanes != 1:
        return None
    size = buffer.dtype.bits * lanes // 8
    if buffer.dtype.bits % 8 or size not in VECTOR_BYTES:
        return None
    form = linear_form(index)
    step = 0
    for atom, coeff in form.live_terms():
        if atom is var:
            step += coeff
        elif _uses(atom, var):
            return None
        elif coeff % lanes:
            return None
    if step != 1 or form.const % lanes:
        return None
    name = NAMED.get((str(buffer.dtype), lanes), RAW[size])
    base = simplify(substitute(index, {var: E.IntImm(var.dtype, 0)}))
    return Access(buffer, base, name, lanes)


def plan_vector_loop(op: S.For):
    """``(store access, {id(load): access})`` when ``op`` prints as vector accesses."""
    lanes = op.extent.value if isinstance(op.extent, E.IntImm) else None
    body = op.body
    if lanes is None or lanes < 2 or not isinstance(body, S.BufferStore) or op.step is not None:
        return None
    if body.value.dtype.lanes != 1:
        return None
    store = vector_access(body.buffer, body.indices[0], op.loop_var, lanes)
    if store is None:
        return None
    loads: dict = {}

    def visit(node):
        if isinstance(node, E.BufferLoad) and _uses(node.indices[0], op.loop_var):
            access = vector_access(node.buffer, node.indices[0], op.loop_var, lanes)
            if access is not None:
                loads[id(node)] = (node, access)

    post_order_visit(body.value, visit)
    return store, loads


def vector_buffers(body) -> set:
    """The data variables (ids) of the buffers some vectorised loop of ``body`` accesses
    as vectors: their arrays must be aligned to 16 bytes."""
    found: set = set()

    def visit(node):
        if isinstance(node, S.For) and node.kind is S.ForKind.VECTORIZED:
            plan = plan_vector_loop(node)
            if plan is not None:
                store, loads = plan
                found.add(id(store.buffer.data))
                found.update(id(access.buffer.data) for _, access in loads.values())

    post_order_visit(body, visit)
    return found


class VectorPrinter:
    """Mixed into the CUDA printer: vectorised loops print through vector types."""

    def init_vectors(self) -> None:
        self.aligned: dict = {}  # id(data var) -> bytes its address must be a multiple of
        self.lane_loads: dict = {}  # id(BufferLoad) -> the text of its lane
        self.async_kernel = False  # copies to shared print as cp.async (:mod:`.async_copy`)
        self.async_sizes: set = set()  # the cp.async sizes used

    def _address(self, access: Access) -> str:
        """The address of the access's first lane (its alignment recorded)."""
        data = access.buffer.data
        bytes_needed = access.buffer.dtype.bits * access.lanes // 8
        self.aligned[id(data)] = max(self.aligned.get(id(data), 1), bytes_needed)
        if isinstance(access.base, E.IntImm) and access.base.value == 0:
            return self.expr(data)
        return f"{self.expr(data)} + {self.expr(access.base)}"

    def _pointer(self, access: Access, const: bool) -> str:
        qualifier = "const " if const else ""
        return f"*({qualifier}{access.vector_type}*)({self._address(access)})"

    def print_vector_loop(self, op: S.For) -> bool:
        """Prints ``op`` with vector accesses; False (nothing printed) when it does not
        qualify."""
        plan = plan_vector_loop(op)
        if plan is None:
            return False
        store, loads = plan
        value = op.body.value
        if isinstance(value, E.BufferLoad) and id(value) in loads:
            (_, access) = loads[id(value)]
            if self.async_kernel and is_async_copy(store, access):  # global -> shared
                size = store.buffer.dtype.bits * store.lanes // 8
                self.async_sizes.add(size)
                self.emit(f"tl_cp_async_{size}({self._address(store)}, {self._address(access)});")
                return True
            if access.vector_type == store.vector_type:  # a copy: one vector move
                self.emit(f"{self._pointer(store, False)} = {self._pointer(access, True)};")
                return True
        self.names.open_scope()
        self.emit("{")  # a block of its own: the temporaries are local to it
        self.level += 1
        for node, access in loads.values():
            temp = self.names.define(E.Var(f"{node.buffer.name}_v"))
            self.emit(f"{access.vector_type} {temp} = {self._pointer(access, True)};")
            elem = self.type_name(node.buffer.dtype)
            self.lane_loads[id(node)] = (f"((const {elem}*)&{temp})", op.loop_var)
        result = self.names.define(E.Var(f"{op.body.buffer.name}_v"))
        self.emit(f"{store.vector_type} {result};")
        self.emit(self.unroll_pragma)
        var = self.names.define(op.loop_var)
        kind = self.type_name(op.loop_var.dtype)
        lanes = op.extent.value
        self.enter(f"for ({kind} {var} = 0; {var} < {lanes}; ++{var})")
        elem = self.type_name(op.body.buffer.dtype)
        self.emit(f"(({elem}*)&{result})[{var}] = {self._strip(self.expr(value))};")
        self.level -= 1
        self.emit("}")
        self.emit(f"{self._pointer(store, False)} = {result};")
        self.close_block()
        for key in loads:
            self.lane_loads.pop(key, None)
        return True

    def lane_load(self, op: E.BufferLoad) -> str | None:
        entry = self.lane_loads.get(id(op))
        if entry is None:
            return None
        array, var = entry
        return f"{array}[{self.expr(var)}]"


__all__ = ["VectorPrinter", "plan_vector_loop", "vector_access", "vector_buffers", "Access"]
