"""Code generators, one package per target (imported as ``tilelang.backends``)."""
