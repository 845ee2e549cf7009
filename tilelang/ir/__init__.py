"""The immutable IR: dtypes, expressions, statements, buffers, functions, visitors,
structural equality and the printer.

Expressions compare structurally with :func:`structural_equal`; ``a == b`` builds an
``EQ`` node (see :mod:`tilelang.ir.expr`).
"""

from tilelang.ir.buffer import (
    Buffer,
    BufferRegion,
    MatchBufferRegion,
    Range,
    decl_buffer,
    dense_strides,
)
from tilelang.ir.convert import const, convert
from tilelang.ir.dtype import DataType, DataTypeError
from tilelang.ir.expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    CmpOp,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Select,
    SizeVar,
    StringImm,
    Sub,
    TIRTypeError,
    Var,
)  # fmt: skip
from tilelang.ir.function import BaseFunc, PrimFunc
from tilelang.ir.functor import (
    ExprFunctor,
    ExprMutator,
    ExprVisitor,
    NodeFunctor,
    StmtExprMutator,
    StmtExprVisitor,
    StmtFunctor,
    StmtMutator,
    StmtVisitor,
    post_order_visit,
    substitute,
)  # fmt: skip
from tilelang.ir.module import IRModule
from tilelang.ir.node import Node, Span
from tilelang.ir.stmt import (
    Allocate,
    AllocateConst,
    AssertStmt,
    AttrStmt,
    Block,
    BlockRealize,
    BufferRealize,
    BufferStore,
    DeclBuffer,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    IterVar,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
    seq_stmt,
)  # fmt: skip
from tilelang.ir.structural import (
    StructuralMismatch,
    assert_structural_equal,
    structural_equal,
    structural_hash,
)  # fmt: skip
