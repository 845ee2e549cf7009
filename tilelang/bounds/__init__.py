"""Buffer bounds: finding out-of-bounds accesses statically, and the errors that
report them (at compile time, and at run time from bounds-checked builds and the
python reference).

* :func:`find_out_of_bounds` -- the accesses of a PrimFunc that provably (or possibly)
  leave their buffers, for the loop domains and guards in scope;
* :class:`~tilelang.errors.OutOfBoundsError` -- what users see, located at the access.
"""

from tilelang.bounds.static import BoundsIssue, find_out_of_bounds

__all__ = ["BoundsIssue", "find_out_of_bounds"]
