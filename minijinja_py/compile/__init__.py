"""Compiling a syntax tree into evaluators: the compiler, its one-walk analysis, and meta (the
variables a template reads).  The top of the engine core."""
