"""``relax.build`` and the virtual machine that runs graph functions.

``build(mod, target)`` compiles every prim_func of the module with
:func:`tilelang.build` for ``target`` (any CPU target: ``"python"``, ``"c"``,
``"llvm"``), resolves every ``call_dps_packed`` name (module prim_funcs first, then
the registry of :func:`tilelang.register_func`; an unknown name is a
:class:`~tilelang.errors.BuildError`), checks the shapes it can decide, and plans
storage. ``VirtualMachine(ex, tilelang.cpu())["main"](*arrays)`` runs a function: it
first checks every argument and every call's shapes (binding the symbolic sizes),
and only then runs the tensor functions, so a shape error never leaves work half
done. Arguments are ``tilelang.nd`` arrays, NumPy arrays or any host array
:func:`tilelang.runtime.ndarray.as_array` accepts; the result is a fresh
:class:`tilelang.nd.NDArray` (``.numpy()``, ``.shape``, ``.dtype``; NumPy reads it
through ``__array__``), as TVM's VM returns, so MLC-course code such as
``vm["main"](data_nd, *params_nd).numpy()`` runs unchanged.
"""

from __future__ import annotations

import time

import attrs
import numpy as np

from tilelang.errors import ArgumentError, BuildError
from tilelang.ir import IRModule, PrimFunc
from tilelang.register import get_global_func
from tilelang.relax.expr import Call, Function, Tuple, Var, callee_name
from tilelang.relax.fuse import fuse_elementwise_calls
from tilelang.relax.native_steps import NativeSteps
from tilelang.relax.program import Program, compile_function
from tilelang.relax.shape import ShapeEnv
from tilelang.relax.specialize import specialize_calls
from tilelang.relax.struct_info import TensorStructInfo
from tilelang.runtime.ndarray import Device, NDArray, as_array, cpu

_MAX_PLANS = 64  # cached shape plans per function (one per distinct argument shapes)


def build(mod: IRModule, target="python", auto_schedule: bool = True) -> Executable:
    """Compiles ``mod`` (prim_funcs and graph functions) into an :class:`Executable`.

    For the c and llvm targets each prim_func nobody scheduled gets the default CPU
    schedule (:mod:`tilelang.schedule.rules`), after each call whose shapes the graph
    decides is given a copy of its prim_func specialised to them
    (:mod:`tilelang.relax.specialize`) and elementwise calls are fused into the calls
    producing their inputs (:mod:`tilelang.relax.fuse`); ``auto_schedule=False``
    keeps them as written. ``ex.trace`` is what the rules did."""
    if not isinstance(mod, IRModule):
        raise BuildError(f"relax.build takes an IRModule, not {type(mod).__name__}")
    if auto_schedule:
        mod = prepare_calls(mod)
    prim_funcs = {name: f for name, f in mod if isinstance(f, PrimFunc)}
    graph_funcs = {name: f for name, f in mod if isinstance(f, Function)}
    if not graph_funcs:
        raise BuildError("relax.build: the module has no graph function (@R.function)")
    packed: dict = {}

    def resolve(callee: str, call: Call) -> str:
        if callee in prim_funcs:
            return "prim_func"
        if call.op == "relax.call_tir":
            raise BuildError(f"call_tir: the module has no prim_func named {callee!r}")
        func = get_global_func(callee, allow_missing=True)
        if func is None:
            raise BuildError(
                f"call_dps_packed: {callee!r} is neither a prim_func of the module nor a "
                "registered function (tilelang.register_func)"
            )
        packed[callee] = func
        return "packed"

    programs = {}
    for name, func in graph_funcs.items():
        programs[name] = compile_function(name, func, resolve)
        check_static_shapes(name, func, prim_funcs)
    library = None
    if prim_funcs:
        import tilelang

        library = tilelang.build(IRModule(prim_funcs), target=target, auto_schedule=auto_schedule)
    return Executable(programs, library, packed, prim_funcs, target)


def prepare_calls(mod: IRModule) -> IRModule:
    """What ``build`` does to the graph before scheduling: every call given a
    prim_func specialised to its shapes, elementwise calls fused into their producers
    (functions somebody scheduled take no part). Tuning extracts its tasks from this
    module, so that it tunes the functions the build runs."""
    from tilelang.schedule.rules.apply import is_user_scheduled

    mod = specialize_calls(mod)
    return fuse_elementwise_calls(mod, fusable=lambda f: not is_user_scheduled(f))


def _callee_buffers(callee: str, func: PrimFunc, num_args: int) -> list:
    params = list(func.params)
    if any(p not in func.buffer_map for p in params):
        raise BuildError(f"{callee}: a prim_func called from a graph takes only buffers")
    if len(params) != num_args + 1:
        raise BuildError(
            f"{callee} takes {len(params)} buffers, but the call passes {num_args} "
            "arguments and one output"
        )
    return [func.buffer_map[p] for p in params]


def check_call(callee, func: PrimFunc, operands, strict: bool) -> None:
    """Checks ``operands`` = [(label, shape, dtype)...] (arguments, then the output)
    against the buffers of ``func``; shapes are ints (run time) or expressions."""
    buffers = _callee_buffers(callee, func, len(operands) - 1)
    env = ShapeEnv()
    for buffer, (label, shape, dtype) in zip(buffers, operands):
        what = f"{callee}: {label} (buffer {buffer.name})"
        if shape is None:
            continue
        if str(dtype) != str(buffer.dtype):
            raise ArgumentError(f"{what}: dtype is {dtype}, expected {buffer.dtype}")
        env.match(buffer.shape, shape, what, strict=strict)


def check_static_shapes(name: str, func: Function, prim_funcs: dict) -> None:
    """Reports, while building, the shape errors that hold whatever the inputs are."""
    for block in func.body.blocks:
        for binding in block.bindings:
            call = binding.value
            if not isinstance(call, Call) or callee_name(call) not in prim_funcs:
                continue
            callee = callee_name(call)
            fields = call.args[1].fields if isinstance(call.args[1], Tuple) else ()
            operands = [_static_operand(f"argument {a.name_hint}" if isinstance(a, Var)
                                        else "a constant argument", a) for a in fields]  # fmt: skip
            out = call.struct_info
            operands.append((f"the output {binding.var.name_hint}", out.shape, out.dtype))
            check_call(f"{name}: {callee}", prim_funcs[callee], operands, strict=False)


def _static_operand(label, expr):
    sinfo = expr.struct_info
    if not isinstance(sinfo, TensorStructInfo):
        return (label, None, None)
    return (label, sinfo.shape, sinfo.dtype)


@attrs.frozen
class Executable:
    """A built module: compiled graph programs, the prim_func library, and the
    registered functions they call."""

    programs: dict
    library: object  # tilelang runtime Module, or None without prim_funcs
    packed: dict
    prim_funcs: dict
    target: object

    def function_names(self) -> list[str]:
        return sorted(self.programs)

    @property
    def trace(self):
        """The default schedule the prim_funcs got (None without prim_funcs)."""
        return None if self.library is None else self.library.trace

    def stats(self, name: str = "main") -> dict:
        """Instructions and storages of a function (storage reuse shows here)."""
        program = self.programs[name]
        return {
            "instructions": len(program.instructions),
            "storages": program.num_storages,
            "storage_of": dict(program.storage_of),
        }


@attrs.define
class _Plan:
    """What one set of argument shapes needs: the output and storage shapes, and --
    once a first call has passed every check of every callee -- the native calls with
    their size arguments worked out (``calls``), so later calls skip the checks."""

    out_shapes: tuple
    storage_shapes: tuple
    calls: list | None = None
    native: object = None  # NativeSteps, False where there are none, None: not tried


class VirtualMachine:
    """Runs the graph functions of an :class:`Executable`: ``vm["main"](*arrays)``."""

    def __init__(self, executable: Executable, device=None):
        if not isinstance(executable, Executable):
            raise ArgumentError("VirtualMachine needs the Executable from relax.build")
        self.executable = executable
        self.device = device
        self._functions: dict = {}

    def __getitem__(self, name: str) -> _VMFunction:
        function = self._functions.get(name)
        if function is None:
            program = self.executable.programs.get(name)
            if program is None:
                known = ", ".join(self.executable.function_names())
                raise KeyError(f"no graph function {name!r} (the executable has: {known})")
            function = self._functions[name] = _VMFunction(program, self.executable, self.device)
        return function

    def time_evaluator(self, name: str, dev=None, number: int = 10, repeat: int = 3):
        """A timer for ``name``: call it with the arguments; it returns a
        :class:`tilelang.runtime.ProfileResult` (seconds per call)."""
        from tilelang.runtime.module import ProfileResult

        function = self[name]

        def evaluate(*args):
            function(*args)  # warm-up (and shape plan)
            results = []
            for _ in range(repeat):
                start = time.perf_counter()
                for _ in range(number):
                    function(*args)
                results.append((time.perf_counter() - start) / number)
            return ProfileResult(tuple(results))

        return evaluate


def _as_numpy(value, param) -> np.ndarray:
    what = f"argument {param.name_hint}"
    try:
        array = as_array(value)
    except BufferError as exc:  # e.g. a torch tensor that requires grad
        raise ArgumentError(f"{what} cannot be read as a host array: {exc}") from None
    if array is None:
        raise ArgumentError(f"{what} must be an array, got {type(value).__name__}")
    return array


class _VMFunction:
    """One graph function, callable on arrays."""

    def __init__(self, program: Program, executable: Executable, device=None):
        self.program = program
        self.executable = executable
        # resolved once: a Device is not free to make, and each result carries one
        self.device = device if isinstance(device, Device) else cpu()
        self._plans: dict = {}
        self._callables = [self._callable(ins) for ins in program.instructions]

    def _callable(self, ins):
        if ins.kind == "packed":
            return self.executable.packed[ins.callee]
        return self.executable.library[ins.callee]

    def __call__(self, *args) -> NDArray:
        program = self.program
        if len(args) != len(program.params):
            names = ", ".join(p.name_hint for p in program.params)
            raise ArgumentError(
                f"{program.name} takes {len(program.params)} arguments ({names}), got {len(args)}"
            )
        arrays = [
            a if type(a) is np.ndarray else _as_numpy(a, p) for a, p in zip(args, program.params)
        ]
        key = tuple([(a.shape, a.dtype, a.flags.c_contiguous) for a in arrays])
        plan = self._plans.get(key)
        if plan is None:
            plan = self._prepare(arrays)
            if len(self._plans) < _MAX_PLANS:
                self._plans[key] = plan
        calls = plan.calls
        if calls is not None:
            if plan.native is None:
                plan.native = NativeSteps.build(program, plan, calls) or False
            if plan.native:
                result = plan.native.run(arrays)
                if result is not None:
                    return NDArray(result, self.device)
        storages = [np.empty(shape, dtype) for shape, dtype in plan.storage_shapes]
        registers: list = [*arrays, *([None] * (program.num_registers - len(arrays)))]
        constants = program.constants
        if calls is None:
            plan.calls = self._run_checked(registers, storages)
        else:
            for ins, (run, sizes) in zip(program.instructions, calls):
                out = storages[ins.storage]
                run(*[registers[a.index] if a.kind == "reg" else constants[a.index]
                      for a in ins.args], out, *sizes)  # fmt: skip
                registers[ins.out] = out
        result = program.result
        if result.kind == "const":  # a copy: the caller may write into it
            return NDArray(np.array(constants[result.index]), self.device)
        return NDArray(registers[result.index], self.device)

    def _run_checked(self, registers, storages) -> list | None:
        """Runs every instruction with its callee's full argument checks; returns the
        unchecked calls for the next calls with the same argument shapes, dtypes and
        layouts, or None where a check depends on more than those (a prim_func that
        writes an argument besides its output)."""
        program, constants = self.program, self.program.constants
        calls: list | None = []
        for ins, run in zip(program.instructions, self._callables):
            inputs = [registers[a.index] if a.kind == "reg" else constants[a.index]
                      for a in ins.args]  # fmt: skip
            out = storages[ins.storage]
            signature = getattr(run, "signature", None)
            if signature is None:  # a registered function: called as it is every time
                run(*inputs, out)
                if calls is not None:
                    calls.append((run, ()))
            else:
                checked = signature.check((*inputs, out))
                run.impl(*checked)
                writes = [signature.writes.get(id(p)) for p in signature.params[:-1]]
                if calls is not None and not any(writes):
                    calls.append((run.impl, checked[len(signature.params) :]))
                else:
                    calls = None
            registers[ins.out] = out
        return calls

    def _prepare(self, arrays) -> _Plan:
        """Binds the symbolic sizes and checks every shape before anything runs."""
        program = self.program
        name = program.name
        env = ShapeEnv()
        shapes: dict = {}  # register -> (shape, dtype)
        for index, (param, array) in enumerate(zip(program.params, arrays)):
            sinfo = param.struct_info
            what = f"{name}: argument {param.name_hint}"
            if isinstance(sinfo, TensorStructInfo):
                if str(array.dtype) != str(sinfo.dtype):
                    raise ArgumentError(f"{what}: dtype is {array.dtype}, expected {sinfo.dtype}")
                if sinfo.shape is not None:
                    env.match(sinfo.shape, array.shape, what)
                elif sinfo.ndim not in (-1, array.ndim):
                    raise ArgumentError(f"{what}: expected rank {sinfo.ndim}, got {array.ndim}")
            shapes[index] = (array.shape, str(array.dtype))
        out_shapes, storage_shapes = [], {}
        for ins in program.instructions:
            what = f"{name}: the output {ins.out_name} of {ins.callee}"
            out_shape = env.concrete(ins.out_shape, what)
            operands = []
            for arg, arg_name in zip(ins.args, ins.arg_names):
                if arg.kind == "reg":
                    shape, dtype = shapes[arg.index]
                else:
                    data = program.constants[arg.index]
                    shape, dtype = data.shape, str(data.dtype)
                operands.append((f"argument {arg_name}", shape, dtype))
            operands.append((f"the output {ins.out_name}", out_shape, ins.out_dtype))
            if ins.kind == "prim_func":
                func = self.executable.prim_funcs[ins.callee]
                check_call(f"{name}: {ins.callee}", func, operands, strict=True)
            shapes[ins.out] = (out_shape, ins.out_dtype)
            storage_shapes.setdefault(ins.storage, (out_shape, ins.out_dtype))
            out_shapes.append(out_shape)
        ordered = tuple(storage_shapes[s] for s in range(program.num_storages))
        return _Plan(tuple(out_shapes), ordered)
