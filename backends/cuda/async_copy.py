"""Asynchronous global -> shared copies (``cp.async``, sm_80 and later).

On an arch that has it, a vectorised loop that copies 4, 8 or 16 contiguous, aligned
bytes from a global buffer into a shared one (a cooperative fetch, see
:mod:`.vectorize`) prints as one ``cp.async`` instead of a load into registers and a
store: the data goes to shared memory without passing through the thread's registers
(16 bytes bypass L1, ``.cg``)::

    tl_cp_async_16(A_shared + (...), A + (...));

A thread must wait for its own copies before the block's threads may read them: in a
kernel with such copies every barrier is preceded by ``cp.async.wait_all``. ThreadSync
puts a barrier between every write of a shared buffer and any later read of it, so
every read of an asynchronously filled buffer comes after the wait; the kernel also
waits before it ends. The copies of one step are not overlapped with the compute of
the previous one (no double buffering: there is no software pipeline yet).
"""

from __future__ import annotations

import re

from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit

#: bytes per copy -> cache operator (``.cg`` exists for 16-byte copies only)
SIZES = {4: "ca", 8: "ca", 16: "cg"}
WAIT = 'asm volatile("cp.async.wait_all;\\n" ::: "memory");'


def arch_has_async_copy(target) -> bool:
    """Whether ``target``'s ``-arch`` (default sm_90, as nvcc_flags) is sm_80 or later."""
    arch = str(target.get("arch", "sm_90")) if target is not None else "sm_90"
    match = re.fullmatch(r"(?:sm|compute)_(\d+)[af]?", arch)
    return bool(match) and int(match.group(1)) >= 80


def is_async_copy(store, load) -> bool:
    """A vector copy (two :class:`.vectorize.Access`) that can be one ``cp.async``."""
    size = store.buffer.dtype.bits * store.lanes // 8
    return (
        store.buffer.scope == "shared"
        and load.buffer.scope == "global"
        and store.vector_type == load.vector_type
        and size in SIZES
    )


def kernel_has_async_copies(body, enabled: bool) -> bool:
    """Whether printing ``body`` will issue ``cp.async`` (decided before printing, so
    that barriers printed earlier than the copies wait too)."""
    from tilelang.backends.cuda.vectorize import plan_vector_loop

    if not enabled:
        return False
    found = []

    def visit(node):
        if isinstance(node, S.For) and node.kind is S.ForKind.VECTORIZED:
            plan = plan_vector_loop(node)
            value = node.body.value if plan is not None else None
            if plan is not None and id(value) in plan[1]:
                found.append(is_async_copy(plan[0], plan[1][id(value)][1]))

    post_order_visit(body, visit)
    return any(found)


def helper(size: int) -> str:
    """The device function that issues one ``size``-byte ``cp.async``."""
    return (
        f"static __device__ __forceinline__ void tl_cp_async_{size}(void* shared, "
        "const void* global) {\n"
        "  unsigned int address = (unsigned int)__cvta_generic_to_shared(shared);\n"
        f'  asm volatile("cp.async.{SIZES[size]}.shared.global [%0], [%1], {size};\\n" '
        ':: "r"(address), "l"(global) : "memory");\n'
        "}"
    )


__all__ = ["arch_has_async_copy", "is_async_copy", "kernel_has_async_copies", "helper", "WAIT"]
