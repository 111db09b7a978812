"""Every attack, in class order."""

from __future__ import annotations

from .cases_amplifiers import AMPLIFIERS, COMPILE_FOLDING, MEMORY_UNCOUNTED
from .cases_bare import BARE_EXCEPTIONS
from .cases_crashes import CRASHES
from .cases_errors import ERRORS
from .cases_escapes import ESCAPES, MUTATIONS
from .cases_python import PYTHON
from .cases_responses import RESPONSE_ATTACKS
from .cases_sandbox4_builtins import SANDBOX4_BUILTINS
from .cases_sandbox4_chat import SANDBOX4_CHAT
from .cases_sandbox4_work import SANDBOX4_WORK
from .cases_shared import SHARED
from .cases_subclass import SUBCLASS
from .cases_training import TRAINING
from .cases_work import COMPILE, MEMORY, WORK
from .model import Attack

ATTACKS: list[Attack] = [
    *ESCAPES,
    *MUTATIONS,
    *CRASHES,
    *WORK,
    *SHARED,
    *SUBCLASS,
    *MEMORY,
    *COMPILE,
    *AMPLIFIERS,
    *COMPILE_FOLDING,
    *MEMORY_UNCOUNTED,
    *PYTHON,
    *ERRORS,
    *BARE_EXCEPTIONS,
    *TRAINING,
    *SANDBOX4_WORK,
    *SANDBOX4_CHAT,
    *SANDBOX4_BUILTINS,
    *RESPONSE_ATTACKS,
]

_ids = [a.id for a in ATTACKS]
assert len(_ids) == len(set(_ids)), "attack ids must be unique"
