"""A graph function's calls of compiled code with every fixed argument worked out once.

Once the VM has run a function with all checks for some argument shapes (see
``_VMFunction`` in :mod:`tilelang.relax.vm`), the calls that follow for the same
shapes differ only in the arrays the caller passes and in the fresh result. Constants
stay where they are, so their addresses are fixed; intermediate values live in
storages this object allocates once and reuses (they never leave the function), so
theirs are fixed too. What remains per call is a few address reads and one ctypes
call per instruction -- the Python cost of a small model is otherwise a good part of
its run time.

The storages are shared by the calls of one function; a call that finds them in use
(another thread, or a registered function calling back into the VM) gets ``None``
and the VM takes its ordinary path with storages of its own.
"""

from __future__ import annotations

import threading

import numpy as np

from tilelang.runtime.ctypes_call import NativeCall

_RESULT = -1  # a hole filled with the result array


class NativeSteps:
    """See the module docstring; made by :meth:`build`, run by :meth:`run`."""

    def __init__(self, steps, result_storage, storage_shapes):
        self.steps = steps  # (cfunc, template args, holes, after_call) per instruction
        self.result_shape = storage_shapes[result_storage]
        self.lock = threading.Lock()

    @classmethod
    def build(cls, program, plan, calls) -> NativeSteps | None:
        """The steps for ``program`` under ``plan``, given the ``(impl, sizes)`` calls
        its checked run returned; None when a call is not native code (a registered
        function, the python backend) or the result is not an instruction's output."""
        result = program.result
        outputs = {ins.out: ins.storage for ins in program.instructions}
        if result.kind != "reg" or result.index not in outputs:
            return None
        result_storage = outputs[result.index]
        storages = {
            index: np.empty(shape, dtype)
            for index, (shape, dtype) in enumerate(plan.storage_shapes)
            if index != result_storage
        }
        num_params = len(program.params)
        steps = []
        for ins, (impl, sizes) in zip(program.instructions, calls):
            native = getattr(impl, "native", None)
            if not isinstance(native, NativeCall):
                return None
            operands = [*ins.args, ("out", ins.storage)]
            template, holes = [], []
            for position, (operand, convert) in enumerate(zip(operands, native.converters)):
                if convert is None:
                    return None  # a scalar parameter: not a graph call
                if isinstance(operand, tuple):
                    storage = operand[1]
                elif operand.kind == "const":
                    template.append(convert(program.constants[operand.index]))
                    continue
                elif operand.index < num_params:
                    template.append(None)
                    holes.append((position, operand.index, convert))
                    continue
                else:
                    storage = outputs[operand.index]
                if storage == result_storage:
                    template.append(None)
                    holes.append((position, _RESULT, convert))
                else:
                    template.append(convert(storages[storage]))
            template.extend(sizes)
            steps.append((native.cfunc, template, tuple(holes), native.after_call))
        steps = cls(tuple(steps), result_storage, plan.storage_shapes)
        steps.storages = storages  # kept alive: the templates hold their addresses
        steps.constants = program.constants
        return steps

    def run(self, arrays) -> np.ndarray | None:
        """The function's result for ``arrays`` (already checked to have the plan's
        shapes, dtypes and layouts), or None when the storages are in use."""
        if not self.lock.acquire(blocking=False):
            return None
        try:
            shape, dtype = self.result_shape
            result = np.empty(shape, dtype)
            for cfunc, template, holes, after_call in self.steps:
                args = template.copy()
                for position, index, convert in holes:
                    args[position] = convert(result if index == _RESULT else arrays[index])
                cfunc(*args)
                after_call()
            return result
        finally:
            self.lock.release()
