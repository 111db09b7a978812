"""The built-in filters used with the `|` operator, with Jinja2 3.1.6's semantics: the registry
assembling `FILTERS` and `FILTER_COSTS` from the modules holding them by kind.

Filters marked with `pass_environment` get the environment first; it
offers `undefined`, `getattr`, `getitem`, `call_filter`, `call_test` and `policies`.
The filters that return lazy iterators in Jinja2 do so here too, through generators that carry
Jinja2's names, so that printing one shows the same `<generator object sync_do_map ...>`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .costs import Cost, declare
from .filter_support import make_attrgetter as make_attrgetter
from .filter_support import make_multi_attrgetter as make_multi_attrgetter
from .methods import do_striptags
from .number_filters import (
    NUMBER_FILTER_COSTS,
    do_abs,
    do_float,
    do_int,
    do_round,
)
from .sequence_filters import (
    SEQUENCE_FILTER_COSTS,
    do_attr,
    do_batch,
    do_default,
    do_dictsort,
    do_first,
    do_groupby,
    do_items,
    do_join,
    do_last,
    do_length,
    do_list,
    do_map,
    do_max,
    do_min,
    do_random,
    do_reject,
    do_rejectattr,
    do_reverse,
    do_select,
    do_selectattr,
    do_slice,
    do_sort,
    do_sum,
    do_unique,
)
from .sequence_filters import use_environment as use_environment
from .serial_filters import (
    SERIAL_FILTER_COSTS,
    do_escape,
    do_filesizeformat,
    do_forceescape,
    do_mark_safe,
    do_pprint,
    do_tojson,
    do_urlencode,
    do_xmlattr,
)
from .serial_filters import chat_tojson as chat_tojson
from .text_filters import (
    TEXT_FILTER_COSTS,
    do_capitalize,
    do_center,
    do_format,
    do_indent,
    do_lower,
    do_replace,
    do_string,
    do_title,
    do_trim,
    do_truncate,
    do_upper,
    do_urlize,
    do_wordcount,
    do_wordwrap,
)

FILTERS: dict[str, Callable[..., Any]] = {
    "abs": do_abs,
    "attr": do_attr,
    "batch": do_batch,
    "capitalize": do_capitalize,
    "center": do_center,
    "count": do_length,
    "d": do_default,
    "default": do_default,
    "dictsort": do_dictsort,
    "e": do_escape,
    "escape": do_escape,
    "filesizeformat": do_filesizeformat,
    "first": do_first,
    "float": do_float,
    "forceescape": do_forceescape,
    "format": do_format,
    "groupby": do_groupby,
    "indent": do_indent,
    "int": do_int,
    "items": do_items,
    "join": do_join,
    "last": do_last,
    "length": do_length,
    "list": do_list,
    "lower": do_lower,
    "map": do_map,
    "max": do_max,
    "min": do_min,
    "pprint": do_pprint,
    "random": do_random,
    "reject": do_reject,
    "rejectattr": do_rejectattr,
    "replace": do_replace,
    "reverse": do_reverse,
    "round": do_round,
    "safe": do_mark_safe,
    "select": do_select,
    "selectattr": do_selectattr,
    "slice": do_slice,
    "sort": do_sort,
    "string": do_string,
    "striptags": do_striptags,
    "sum": do_sum,
    "title": do_title,
    "tojson": do_tojson,
    "trim": do_trim,
    "truncate": do_truncate,
    "unique": do_unique,
    "upper": do_upper,
    "urlencode": do_urlencode,
    "urlize": do_urlize,
    "wordcount": do_wordcount,
    "wordwrap": do_wordwrap,
    "xmlattr": do_xmlattr,
}

# Each filter's cost (see costs.py): charged before it runs from its input's size (its other
# arguments by theirs), and on its output after; ``guarded`` names the check it makes itself
# from an argument's value before it builds. Each module declares its filters' costs beside
# them; the table is merged here in name order.
FILTER_COSTS: dict[str, Cost] = dict(
    sorted(
        {
            **TEXT_FILTER_COSTS,
            **SERIAL_FILTER_COSTS,
            **NUMBER_FILTER_COSTS,
            **SEQUENCE_FILTER_COSTS,
        }.items()
    )
)
declare("filter", FILTER_COSTS)
