"""The host/device split: a lowered PrimFunc -> the kernels the host launches in order.

Each outermost thread-bound loop (``blockIdx.*`` / ``threadIdx.*``) becomes one
``__global__`` kernel. Its launch dimensions are the extents of the bound loops inside
it: every loop bound to the same axis must have the same extent (threads: a constant;
blocks: may use the function's scalar and size parameters, evaluated at each call).

Around the kernels only allocations may remain: a ``shared``/``local`` allocation moves
into each kernel that uses it, and a ``global`` one becomes a device *workspace* the
host allocates and passes to the kernels. Any other statement outside the thread-bound
loops would have to run on the host, which this backend does not do: it is a
:class:`BuildError` that names the statement.
"""

from __future__ import annotations

import math

import attrs

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprVisitor, post_order_visit
from tilelang.ir.structural import structural_equal

THREAD_AXES = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
BLOCK_AXES = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
MAX_THREADS_PER_BLOCK = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)


@attrs.frozen
class Workspace:
    """A ``global`` intermediate buffer the host allocates on the device."""

    var: E.Var  # its data variable
    dtype: object
    extents: tuple  # PrimExprs, in elements


@attrs.frozen
class Kernel:
    """One ``__global__`` function and how to launch it."""

    name: str
    body: S.Stmt  # the thread-bound loop, wrapped in the allocations moved into it
    params: tuple  # Vars, in order: buffer data vars and workspaces (handles), scalars
    grid: tuple  # three PrimExprs (blockIdx.x, .y, .z extents)
    block: tuple  # three ints (threadIdx.x, .y, .z extents)

    @property
    def threads(self) -> int:
        return math.prod(self.block)


@attrs.frozen
class DeviceFunction:
    """The kernels of one PrimFunc and the workspaces the host allocates for them."""

    kernels: tuple
    workspaces: tuple


def split_host_device(func, symbol: str) -> DeviceFunction:
    """The kernels of the lowered ``func`` (see the module docstring)."""
    collector = _KernelCollector(symbol)
    collector.collect(func.body, ())
    if not collector.regions:
        raise BuildError(
            f"function {symbol!r} has no thread-bound loop, so nothing runs on the GPU; "
            "bind loops to blockIdx/threadIdx first (sch.bind(loop, 'threadIdx.x'))"
        )
    host_vars = _host_vars(func)
    order = _param_order(func, collector.workspaces)
    kernels = []
    for index, (region, wrappers) in enumerate(collector.regions):
        name = f"{symbol}_kernel{index}" if len(collector.regions) > 1 else f"{symbol}_kernel"
        body = _wrap(region, wrappers)
        grid, block = _launch_dims(body, name, host_vars)
        used = _free_vars(body)
        params = tuple(v for v in order if id(v) in used)
        kernels.append(Kernel(name, body, params, grid, block))
    return DeviceFunction(tuple(kernels), tuple(collector.workspaces))


class _KernelCollector:
    def __init__(self, symbol: str):
        self.symbol = symbol
        self.regions: list = []  # (thread-bound loop, enclosing moved allocations)
        self.workspaces: list[Workspace] = []
        self.workspace_vars: set = set()

    def collect(self, stmt, wrappers: tuple) -> None:
        if isinstance(stmt, S.For) and stmt.kind is S.ForKind.THREAD_BINDING:
            self.regions.append((stmt, wrappers))
        elif isinstance(stmt, S.SeqStmt):
            for child in stmt.seq:
                self.collect(child, wrappers)
        elif isinstance(stmt, S.Allocate) and stmt.scope == "global":
            self.workspaces.append(Workspace(stmt.buffer_var, stmt.dtype, stmt.extents))
            self.workspace_vars.add(id(stmt.buffer_var))
            self.collect(stmt.body, wrappers)
        elif isinstance(stmt, S.Allocate):
            self.collect(stmt.body, (*wrappers, stmt))
        elif isinstance(stmt, S.DeclBuffer):
            keep = id(stmt.buffer.data) not in self.workspace_vars
            self.collect(stmt.body, (*wrappers, stmt) if keep else wrappers)
        elif isinstance(stmt, S.Evaluate) and isinstance(stmt.value, (E.IntImm, E.FloatImm)):
            pass  # T.evaluate(0)
        else:
            raise BuildError(
                f"function {self.symbol}: {_describe(stmt)} is outside every thread-bound "
                "loop and would run on the host; the CUDA backend runs only kernels. "
                "Bind its loops to blockIdx/threadIdx (sch.bind) or move it into a "
                "thread-bound loop"
            )


def _describe(stmt) -> str:
    if isinstance(stmt, S.For):
        return f"the {stmt.kind.name.lower()} loop over {stmt.loop_var.name}"
    if isinstance(stmt, S.BufferStore):
        return f"a store to {stmt.buffer.name}"
    return f"a {type(stmt).__name__} statement"


def _wrap(region, wrappers) -> S.Stmt:
    """``region`` inside the moved allocations it uses (innermost last)."""
    used = _free_vars(region)
    body = region
    for wrapper in reversed(wrappers):
        data = wrapper.buffer_var if isinstance(wrapper, S.Allocate) else wrapper.buffer.data
        if id(data) in used:
            body = attrs.evolve(wrapper, body=body)
    return body


def _free_vars(stmt) -> set:
    """Ids of the variables ``stmt`` refers to (including buffers' data variables)."""
    found: set = set()

    def visit(node):
        if isinstance(node, E.Var):
            found.add(id(node))
        elif isinstance(node, (E.BufferLoad, S.BufferStore)):
            found.add(id(node.buffer.data))

    post_order_visit(stmt, visit)
    return found


def _host_vars(func) -> set:
    """Ids of the variables known on the host: scalar parameters and size variables."""
    scalars = [p for p in func.params if func.buffer_map.get(p) is None]
    return {id(v) for v in (*scalars, *func.attrs.get("tl.size_vars", ()))}


def _param_order(func, workspaces) -> list:
    order = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        order.append(param if buffer is None else buffer.data)
    order += [w.var for w in workspaces]
    order += list(func.attrs.get("tl.size_vars", ()))
    return order


def _launch_dims(body, name: str, host_vars: set) -> tuple[tuple, tuple]:
    extents: dict[str, E.PrimExpr] = {}

    def visit(node):
        axis = node.thread_binding
        if axis not in THREAD_AXES + BLOCK_AXES:
            raise BuildError(
                f"kernel {name}: loop {node.loop_var.name} is bound to {axis!r}; the CUDA "
                f"backend knows {', '.join(BLOCK_AXES + THREAD_AXES)}"
            )
        known = extents.get(axis)
        if known is None:
            extents[axis] = node.extent
        elif not structural_equal(known, node.extent):
            raise BuildError(
                f"kernel {name}: loops bound to {axis} have different extents "
                f"({_show(known)} and {_show(node.extent)} for {node.loop_var.name}); "
                "every loop bound to one thread axis must have the same extent"
            )

    for loop in _bound_loops(body):  # outermost first, for the messages
        visit(loop)
    block = []
    for axis in THREAD_AXES:
        extent = extents.get(axis, E.IntImm("int32", 1))
        if not isinstance(extent, E.IntImm) or extent.value < 1:
            raise BuildError(
                f"kernel {name}: the extent of {axis} must be a positive constant, "
                f"got {_show(extent)}"
            )
        block.append(extent.value)
    if math.prod(block) > MAX_THREADS_PER_BLOCK:
        raise BuildError(
            f"kernel {name}: {math.prod(block)} threads per block ({block[0]} x {block[1]} "
            f"x {block[2]}); CUDA allows at most {MAX_THREADS_PER_BLOCK}"
        )
    grid = []
    for axis, limit in zip(BLOCK_AXES, MAX_GRID):
        extent = extents.get(axis, E.IntImm("int32", 1))
        if isinstance(extent, E.IntImm) and not 1 <= extent.value <= limit:
            raise BuildError(f"kernel {name}: {axis} extent {extent.value} is not in 1..{limit}")
        if not _free_vars(extent) <= host_vars:
            raise BuildError(
                f"kernel {name}: the extent of {axis} ({_show(extent)}) must depend only on "
                "the function's scalar parameters and buffer sizes"
            )
        grid.append(extent)
    return tuple(grid), tuple(block)


def _bound_loops(stmt) -> list:
    """The thread-bound loops in ``stmt``, in pre-order."""
    found = []

    class Finder(StmtExprVisitor):
        def visit_for(self, op):
            if op.kind is S.ForKind.THREAD_BINDING:
                found.append(op)
            self.generic_visit(op)

    Finder().visit(stmt)
    return found


def _show(expr) -> str:
    from tilelang.runtime.args import show_expr

    return show_expr(expr)


__all__ = ["split_host_device", "Kernel", "Workspace", "DeviceFunction"]
