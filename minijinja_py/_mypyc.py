"""`mypyc_attr`: how mypyc builds a class of the optional compiled build; nothing at run time.

The pure-Python package does not depend on mypy_extensions, so the decorator is imported only
for type checkers (and mypyc, which reads it from the source and never calls it for a native
class); the pure build runs the identity below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr as mypyc_attr
else:

    def mypyc_attr(*flags: Any, **options: Any) -> Any:
        return lambda cls: cls
