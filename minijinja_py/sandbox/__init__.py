"""The sandbox, at the bottom of the engine: the limits of a render, the budget that counts what
it spends, and the guard on calls into Python code.  Imports nothing of the package but errors."""
