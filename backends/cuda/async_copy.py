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
waits before it ends.

A kernel with a software pipeline's asynchronous stage
(:mod:`tilelang.transform.inject_software_pipeline`) manages the copies in groups
instead: only the copies of its ``async_scope`` statements are ``cp.async``, each
``async_commit_queue_scope`` ends with ``cp.async.commit_group`` and each
``async_wait_queue_scope`` is ``cp.async.wait_group n`` (n: its
``async_wait_inflight_count``), which the pipeline put before the statements that
read the copies, followed by a barrier (ThreadSync, blind to the copies' delay, may
see none needed there); other barriers no longer wait for every copy, so the next
step's copies stay in flight while the current step computes (double buffering).
"""

from __future__ import annotations

import re

from tilelang.errors import BuildError
from tilelang.ir import stmt as S
from tilelang.ir.convert import const_int_value
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


COMMIT = 'asm volatile("cp.async.commit_group;\\n" ::: "memory");'
ASYNC_SCOPE, COMMIT_SCOPE = "async_scope", "async_commit_queue_scope"
WAIT_SCOPE, INFLIGHT = "async_wait_queue_scope", "async_wait_inflight_count"


def kernel_has_async_groups(body, enabled: bool) -> bool:
    """Whether ``body`` holds a software pipeline's asynchronous stage (and the arch
    has ``cp.async``): its copies then go in explicit groups."""
    found = []

    def visit(node):
        if isinstance(node, S.AttrStmt) and node.attr_key == COMMIT_SCOPE:
            found.append(node)

    if enabled:
        post_order_visit(body, visit)
    return bool(found)


def print_async_attr(printer, op) -> bool:
    """Prints a pipeline's ``async_*`` mark (True), or returns False for other
    attributes. Without ``cp.async`` (an older arch) the copies are plain: the marks
    print nothing and the barriers order them."""
    groups = printer.async_groups
    if op.attr_key == ASYNC_SCOPE:
        saved = printer.async_kernel
        printer.async_kernel = groups  # this statement's copies are asynchronous
        printer.visit(op.body)
        printer.async_kernel = saved
        return True
    if op.attr_key == COMMIT_SCOPE:
        printer.visit(op.body)
        if groups:
            printer.emit(COMMIT)
        return True
    if op.attr_key == WAIT_SCOPE:
        inner = op.body
        if not (isinstance(inner, S.AttrStmt) and inner.attr_key == INFLIGHT):
            raise BuildError(f"{WAIT_SCOPE} must hold an {INFLIGHT} attribute")
        count = const_int_value(inner.value)
        if groups:  # this thread's copies, then every thread's: a barrier
            printer.emit(f'asm volatile("cp.async.wait_group {count};\\n" ::: "memory");')
            printer.emit(f"{printer.barrier};")
        printer.visit(inner.body)
        return True
    return False


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


__all__ = [
    "arch_has_async_copy", "is_async_copy", "kernel_has_async_copies", "helper", "WAIT",
    "COMMIT", "kernel_has_async_groups", "print_async_attr",
]  # fmt: skip
