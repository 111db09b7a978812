"""The anchors of a response_template (open/close markers, the start anchor, xml-inline's
tag pattern), matched in time linear in the response.

Why not Python's `re`: transformers runs these patterns with the `regex` module, including
its *partial* matches (does the end of the buffer begin a marker that more text could
complete?), which `re` cannot answer; and a backtracking engine run again from each position
of attacker-written text can take quadratic or exponential time. So:

* literal anchors (`open`, `close`, `start_anchor` as strings or lists) are found with
  `str.find`, and a partial literal is a suffix of the buffer that begins one of them;
* `*_pattern` anchors are parsed with the standard library's own regex parser (so the syntax
  and its errors are Python's) and run on a small Pike virtual machine: a set of threads, one
  per instruction at most, advanced one character at a time. That is linear in the text for
  a given pattern, gives the same leftmost match and groups as a backtracking engine, and says
  for free which threads are still alive at the end of the buffer (the partial match).
  What needs backtracking is refused when the template is loaded: backreferences, lookbehind,
  a lookahead that more of the pattern follows, negative lookahead, atomic groups and
  possessive repeats, and flags other than DOTALL (always on, as in transformers). A lookahead
  at the end of the pattern (or of one of its top-level alternatives, as in a closer that is
  the next region's opener or the end of the turn: `(?=<call>)|</s>`) needs none: it is matched
  as the rest of the pattern, and the match ends where the lookahead began.

The one bound that changes results: a marker is at most `MAX_ANCHOR` characters long. A
partial marker older than that is given up (so a stream holds back at most that much text),
and the search for a longer greedy match stops that far past its start. Real markers are tens
of characters; a response that hides one over 4,096 characters parses as if it were text.

The scan state of a pattern is kept between calls (`Scan`), so a stream fed one character
at a time does not search its held text again at each step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

try:  # Python 3.11+
    from re import _parser as _sre  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre  # type: ignore[no-redef]

__all__ = ["MAX_ANCHOR", "Literals", "Match", "Pattern", "Scan"]

#: the longest marker (open, close or start anchor match) a response can hold
MAX_ANCHOR = 4096
#: Characters a pattern's long-lived threads may step over in one response: the work of
#: matching is Python's, a few microseconds a character, and only a response built to keep a
#: pattern open (an opener repeated without its end) comes near it; beyond it the response is
#: refused.
MAX_PATTERN_WORK = 200_000
# A thread alive longer than this is counted in that work: a real marker's pattern decides
# within a few characters (text full of "<" starts many threads that die at once, uncounted).
_LONG_LIVED = 64
#: instructions a compiled pattern may have ({m,n} repeats are unrolled)
MAX_PROGRAM = 20_000

_CHAR, _MATCH, _JMP, _SPLIT, _SAVE, _ASSERT = range(6)
_ALLOWED_FLAGS = re.DOTALL | re.UNICODE


@dataclass
class Match:
    """Where a marker was found: `partial` when the buffer ends inside it."""

    start: int
    end: int
    groups: dict[str, str | None] = field(default_factory=dict)
    partial: bool = False
    #: Where the matching stopped: past `end` by what a final lookahead read.
    reach: int = -1

    def __post_init__(self) -> None:
        if self.reach < self.end:
            self.reach = self.end


@dataclass
class Scan:
    """What a pattern's search knows of a buffer, to go on from when the buffer grows.

    `seeds` are the threads (instruction, captures) about to be closed over at `reached`;
    `best` is the best match completed before `reached` (as captures, end)."""

    origin: int
    reached: int
    seeds: list[tuple[int, tuple[int | None, ...]]]
    best: tuple[tuple[int | None, ...], int] | None = None
    cache: dict[str | None, Any] = field(default_factory=dict)
    #: Characters the threads have stepped over so far, in this buffer (see MAX_PATTERN_WORK).
    work: int = 0


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


_CATEGORIES = {
    "CATEGORY_DIGIT": (str.isdecimal, False, r"\d"),
    "CATEGORY_NOT_DIGIT": (str.isdecimal, True, r"\D"),
    "CATEGORY_SPACE": (str.isspace, False, r"\s"),
    "CATEGORY_NOT_SPACE": (str.isspace, True, r"\S"),
    "CATEGORY_WORD": (_is_word, False, r"\w"),
    "CATEGORY_NOT_WORD": (_is_word, True, r"\W"),
}


def _class(items: list[tuple[Any, Any]], what: str) -> tuple[Any, str]:
    """A predicate for one `[...]` set, and the same set as `re` source (for skipping)."""
    negate = False
    chars: set[str] = set()
    ranges: list[tuple[int, int]] = []
    tests: list[tuple[Any, bool]] = []
    parts: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chars.add(chr(arg))
            parts.append(re.escape(chr(arg)))
        elif name == "RANGE":
            ranges.append(arg)
            parts.append(f"{re.escape(chr(arg[0]))}-{re.escape(chr(arg[1]))}")
        elif name == "CATEGORY" and str(arg) in _CATEGORIES:
            test, inverted, source = _CATEGORIES[str(arg)]
            tests.append((test, inverted))
            parts.append(source)
        else:
            raise ValueError(f"{what}: {name} {arg} inside [...] is not supported")

    def member(char: str) -> bool:
        found = (
            char in chars
            or any(low <= ord(char) <= high for low, high in ranges)
            or any(test(char) != inverted for test, inverted in tests)
        )
        return found != negate

    return member, f"[{'^' if negate else ''}{''.join(parts)}]"


def _literal_start(items: list[Any]) -> Any:
    """A `re` for the literal text every match begins with (two characters or more), to jump
    over everything else at the interpreter's speed: text full of the first character alone
    (HTML's "<" before a "<|channel|>" opener) starts no thread.  None when there is none."""
    literal = _sre.LITERAL if hasattr(_sre, "LITERAL") else None
    chars: list[str] = []
    for op, arg in items:
        if literal is None or op is not literal:
            break
        chars.append(chr(arg))
    if len(chars) < 2:
        return None
    text = "".join(chars)
    # (or a start of it where the buffer ends: a stream's marker may be cut there)
    cut = [re.escape(text[:size]) + r"\Z" for size in range(len(text) - 1, 0, -1)]
    return re.compile("|".join([re.escape(text), *cut]))


class Pattern:
    """A `*_pattern` of a response_template, compiled for the linear matcher."""

    literal = False

    def __init__(self, source: str, what: str) -> None:
        if not isinstance(source, str):
            raise ValueError(f"{what} must be a string, got {type(source).__name__}")
        try:
            parsed = _sre.parse(source, re.DOTALL)
        except (re.error, RecursionError, OverflowError) as exc:
            raise ValueError(f"{what} is not a valid regular expression: {exc}") from None
        state = getattr(parsed, "state", None) or parsed.pattern
        if state.flags & ~_ALLOWED_FLAGS:
            raise ValueError(f"{what}: inline flags other than (?s) are not supported")
        self.source = source
        self.groupindex: dict[str, int] = dict(state.groupdict)
        # (the captures' slots, then one for where a final lookahead began)
        self._slots = (2 * (state.groups + 1) if hasattr(state, "groups") else 2) + 1
        self._ahead = self._slots - 1
        self._what = what
        self._ops: list[int] = []
        self._args: list[Any] = []
        self._args2: list[int] = []
        self._starts: list[str] = []  # re sources of the characters that can begin a match
        self._emit(list(parsed), tail=True)
        self._add(_MATCH)
        self._skip = _literal_start(list(parsed)) or self._skipper()
        self._edge = 1 if "AT_END" in self._args else 0

    # compiling ----------------------------------------------------------------------------

    def _add(self, op: int, arg: Any = None, arg2: int = 0) -> int:
        if len(self._ops) >= MAX_PROGRAM:
            raise ValueError(f"{self._what}: the pattern is too large (over {MAX_PROGRAM} steps)")
        self._ops.append(op)
        self._args.append(arg)
        self._args2.append(arg2)
        return len(self._ops) - 1

    def _emit(self, items: list[tuple[Any, Any]], tail: bool = False) -> None:
        # `tail`: nothing of the pattern follows these items (a lookahead is allowed last)
        for index, (op, arg) in enumerate(items):
            name = str(op)
            last = tail and index == len(items) - 1
            if name == "LITERAL":
                self._char((lambda c: lambda x: x == c)(chr(arg)), re.escape(chr(arg)))
            elif name == "NOT_LITERAL":
                self._char((lambda c: lambda x: x != c)(chr(arg)), f"[^{re.escape(chr(arg))}]")
            elif name == "ANY":
                self._char(lambda x: True, "(?s:.)")
            elif name == "IN":
                member, source = _class(arg, self._what)
                self._char(member, source)
            elif name == "BRANCH":
                self._branch(arg[1], last)
            elif name == "SUBPATTERN":
                group, add_flags, del_flags, body = arg
                if (add_flags & ~_ALLOWED_FLAGS) or del_flags:
                    raise ValueError(f"{self._what}: scoped flags are not supported")
                if group:
                    self._add(_SAVE, 2 * group)
                self._emit(list(body), last)
                if group:
                    self._add(_SAVE, 2 * group + 1)
            elif name in ("MAX_REPEAT", "MIN_REPEAT"):
                self._repeat(arg, greedy=name == "MAX_REPEAT")
            elif name == "AT" and str(arg) in (
                "AT_BEGINNING",
                "AT_BEGINNING_STRING",
                "AT_END",
                "AT_END_STRING",
                "AT_BOUNDARY",
                "AT_NON_BOUNDARY",
            ):
                self._add(_ASSERT, str(arg))
            elif name == "ASSERT" and arg[0] == 1 and last:
                # a final lookahead: read as the rest of the pattern, the match ending here
                self._add(_SAVE, self._ahead)
                self._emit(list(arg[1]))
            elif name == "ASSERT" and arg[0] == 1:
                raise ValueError(
                    f"{self._what}: a lookahead is supported only at the end of the pattern "
                    "(or of a top-level alternative), where it needs no backtracking"
                )
            else:
                # backreferences, lookbehind, negative lookahead, atomic groups, possessive
                # repeats: all need backtracking, which this matcher does not do
                raise ValueError(
                    f"{self._what}: {name.lower()} is not supported in response_template "
                    "patterns (they are matched without backtracking)"
                )

    def _char(self, test: Any, source: str) -> None:
        self._add(_CHAR, test)
        self._starts.append(source)

    def _branch(self, alternatives: list[Any], tail: bool) -> None:
        jumps = []
        for index, alternative in enumerate(alternatives):
            if index < len(alternatives) - 1:
                split = self._add(_SPLIT, None)
                self._args[split] = split + 1
                self._emit(list(alternative), tail)
                jumps.append(self._add(_JMP, None))
                self._args2[split] = len(self._ops)
            else:
                self._emit(list(alternative), tail)
        for jump in jumps:
            self._args[jump] = len(self._ops)

    def _repeat(self, arg: tuple[int, int, Any], greedy: bool) -> None:
        low, high, body = arg
        unbounded = high == _sre.MAXREPEAT
        if low * max(len(body), 1) > MAX_PROGRAM or (
            not unbounded and high * max(len(body), 1) > MAX_PROGRAM
        ):
            raise ValueError(f"{self._what}: the pattern is too large (a repeat is too long)")
        for _ in range(low):
            self._emit(list(body))
        if unbounded:
            loop = self._add(_SPLIT, None)
            self._emit(list(body))
            self._add(_JMP, loop)
            self._set_split(loop, loop + 1, len(self._ops), greedy)
            return
        exits = []
        for _ in range(high - low):
            split = self._add(_SPLIT, None)
            exits.append(split)
            self._emit(list(body))
        for split in exits:
            self._set_split(split, split + 1, len(self._ops), greedy)

    def _set_split(self, at: int, body: int, out: int, greedy: bool) -> None:
        self._args[at], self._args2[at] = (body, out) if greedy else (out, body)

    def _skipper(self) -> Any:
        """A `re` for the characters a match can begin with, to jump over the text between
        candidates; None when the pattern can match the empty string (or begins with `^`)."""
        seen: set[int] = set()
        stack = [0]
        firsts: list[int] = []
        while stack:
            pc = stack.pop()
            if pc in seen:
                continue
            seen.add(pc)
            op = self._ops[pc]
            if op == _MATCH:
                return None
            if op == _CHAR:
                firsts.append(pc)
            elif op == _JMP:
                stack.append(self._args[pc])
            elif op == _SPLIT:
                stack.extend((self._args[pc], self._args2[pc]))
            else:  # (an assertion is passed over: skipping stays safe, if less useful)
                stack.append(pc + 1)
        char_pcs = [pc for pc in range(len(self._ops)) if self._ops[pc] == _CHAR]
        sources = [self._starts[char_pcs.index(pc)] for pc in sorted(set(firsts))]
        # one character from a set: a search that never backtracks
        return re.compile("|".join(sources), re.DOTALL) if sources else None

    # matching -----------------------------------------------------------------------------

    def _holds(self, kind: str, text: str, i: int, n: int, shift: int) -> bool:
        if kind in ("AT_BEGINNING", "AT_BEGINNING_STRING"):
            return i + shift == 0
        if kind == "AT_END_STRING":
            return i == n
        if kind == "AT_END":
            return i == n or (i == n - 1 and text[i] == "\n")
        before = i > 0 and _is_word(text[i - 1])
        after = i < n and _is_word(text[i])
        return (before != after) == (kind == "AT_BOUNDARY")

    def _closure(
        self, seeds: list[tuple[int, tuple[int | None, ...]]], i: int, text: str, n: int, shift: int
    ) -> tuple[list[tuple[int, tuple[int | None, ...]]], tuple[tuple[int | None, ...], int] | None]:
        """The threads at `i` waiting for a character, in priority order, and the match one of
        them completes here (threads after it are of lower priority and dropped)."""
        ops, args, args2 = self._ops, self._args, self._args2
        seen: set[int] = set()
        live: list[tuple[int, tuple[int | None, ...]]] = []
        for seed in seeds:
            stack = [seed]
            while stack:
                pc, caps = stack.pop()
                if pc in seen:
                    continue
                seen.add(pc)
                op = ops[pc]
                if op == _CHAR:
                    live.append((pc, caps))
                elif op == _MATCH:
                    return live, (caps, i)
                elif op == _JMP:
                    stack.append((args[pc], caps))
                elif op == _SPLIT:
                    stack.append((args2[pc], caps))
                    stack.append((args[pc], caps))
                elif op == _SAVE:
                    slot = args[pc]
                    stack.append((pc + 1, caps[:slot] + (i,) + caps[slot + 1 :]))
                elif self._holds(args[pc], text, i, n, shift):
                    stack.append((pc + 1, caps))
        return live, None

    def _start(self, i: int) -> tuple[int, tuple[int | None, ...]]:
        return (0, (i,) + (None,) * (self._slots - 1))

    def _rebase(self, scan: Scan | None, pos: int) -> Scan:
        if scan is None:
            return Scan(pos, pos, [])
        if pos <= scan.origin:
            return scan
        if scan.best is not None and scan.best[0][0] < pos:  # type: ignore[operator]
            return Scan(pos, pos, [], work=scan.work)
        kept = [seed for seed in scan.seeds if seed[1][0] >= pos]  # type: ignore[operator]
        if len(kept) != len(scan.seeds):
            young = scan.reached - MAX_ANCHOR
            if any(seed[1][0] >= young for seed in scan.seeds if seed[1][0] < pos):  # type: ignore[operator]
                # a thread that began before pos may have absorbed one that began after it
                # (one thread per instruction): look at the recent text again to be exact
                return Scan(pos, max(pos, young), [], work=scan.work)
        scan.seeds = kept
        scan.origin = pos
        return scan

    def search(
        self, text: str, pos: int, *, partial: bool, scan: Scan | None = None, shift: int = 0
    ) -> tuple[Match | None, Scan]:
        """The leftmost match starting at or after `pos`; else, when `partial`, the earliest
        start from which a match could still complete with more text (as `regex` does with
        `partial=True`). `scan` is the state a previous call on a prefix of `text` returned."""
        scan = self._rebase(scan, pos)
        n = len(text)
        # What is decided at the last character or two depends on what comes next (`$` holds
        # before a final newline): that part is worked out afresh at each call, never kept.
        stop = max(scan.reached, n - self._edge)
        work = [scan.work]
        i, seeds, best, _, _ = self._run(
            text, n, shift, scan.reached, scan.seeds, scan.best, stop, work
        )
        scan.reached, scan.seeds, scan.best, scan.work = i, seeds, best, work[0]
        if i < n and (seeds or best is None):
            i, seeds, best, live, done = self._run(text, n, shift, i, seeds, best, n, work)
        else:
            live, done = self._closure(seeds, i, text, n, shift) if i >= n else ([], None)
        if done is not None:
            best = done
        if best is not None:
            caps, end = best
            return self._match(text, caps, end), scan
        if partial and live:
            start = min(caps[0] for _, caps in live)  # type: ignore[type-var]
            start = max(start, n - MAX_ANCHOR)  # type: ignore[type-var]
            if start < n:
                return Match(start, n, partial=True), scan
        return None, scan

    def _run(
        self,
        text: str,
        n: int,
        shift: int,
        i: int,
        seeds: list[tuple[int, tuple[int | None, ...]]],
        best: tuple[tuple[int | None, ...], int] | None,
        stop: int,
        work: list[int],
    ) -> tuple[int, list[Any], Any, list[Any], Any]:
        """Advance the threads from `i` to `stop` (or until the search is decided); at `stop`
        the threads are returned both before (`seeds`) and after (`live`, `done`) closing
        over the epsilon steps there."""
        args = self._args
        live: list[Any] = []
        done = None
        while True:
            if not seeds and best is None:
                if self._skip is not None and i < stop:
                    found = self._skip.search(text, i, stop)
                    i = found.start() if found is not None else stop
                seeds = [self._start(i)]
            if i >= stop:
                if stop >= n:
                    live, done = self._closure(seeds, i, text, n, shift)
                return i, seeds, best, live, done
            live, done = self._closure(seeds, i, text, n, shift)
            if done is not None:
                best = done
            if best is not None and (not live or i - best[0][0] >= MAX_ANCHOR):  # type: ignore[operator]
                return i, [], best, [], None
            char = text[i]
            seeds = [(pc + 1, caps) for pc, caps in live if args[pc](char)]
            i += 1
            if live and i - min(caps[0] for _, caps in live) > _LONG_LIVED:  # type: ignore[type-var]
                work[0] += 1
            if work[0] > MAX_PATTERN_WORK:
                raise ValueError(
                    f"the response keeps a marker's pattern matching over more than "
                    f"{MAX_PATTERN_WORK} characters (a marker is at most {MAX_ANCHOR})"
                )
            if best is None:
                seeds.append(self._start(i))

    def _match(self, text: str, caps: tuple[int | None, ...], end: int) -> Match:
        start = caps[0]
        assert start is not None
        groups: dict[str, str | None] = {}
        for name, index in self.groupindex.items():
            first, last = caps[2 * index], caps[2 * index + 1]
            groups[name] = text[first:last] if first is not None and last is not None else None
        ahead = caps[self._ahead]
        return Match(start, end if ahead is None else ahead, groups, reach=end)


class Literals:
    """A literal anchor: one string or a list of them, any of which matches."""

    literal = True
    groupindex: dict[str, int] = {}

    def __init__(self, raw: Any, what: str) -> None:
        if isinstance(raw, str):
            literals = [raw]
        elif isinstance(raw, list):
            if not raw:
                raise ValueError(f"{what}: a list of literals must hold at least one")
            if not all(isinstance(item, str) for item in raw):
                raise ValueError(f"{what}: a list of literals must hold only strings")
            literals = list(dict.fromkeys(raw))
        else:
            raise ValueError(
                f"{what} must be a string or a list of strings, got {type(raw).__name__}"
            )
        if "" in literals:
            raise ValueError(f"{what}: a literal cannot be the empty string")
        self.literals: list[str] = sorted(literals, key=len, reverse=True)
        self.longest: int = len(self.literals[0])
        # A match that ends at the buffer's edge may still grow when one literal begins another.
        self.can_extend: bool = any(a != b and a.startswith(b) for a in literals for b in literals)

    def search(
        self, text: str, pos: int, *, partial: bool, scan: Scan | None = None, shift: int = 0
    ) -> tuple[Match | None, Scan]:
        n = len(text)
        if scan is None or pos < scan.origin:
            scan = Scan(pos, pos, [])
        # literal -> (next occurrence or -1, length of text searched); None -> see below
        cache = scan.cache
        best: Match | None = None
        for literal in self.literals:
            at, searched = cache.get(literal, (None, 0))
            if at is None or (at >= 0 and at < pos):
                at = text.find(literal, pos)
            elif at < 0:
                at = text.find(literal, max(pos, searched - len(literal) + 1))
            cache[literal] = (at, n)
            if at >= 0 and (best is None or at < best.start):
                best = Match(at, at + len(literal))
        scan.origin = pos
        if best is not None or not partial:
            return best, scan
        # A start whose text is not the beginning of a literal never becomes one as the buffer
        # grows: the next search goes on from the first start not ruled out (kept in the cache
        # under None), so a stream fed one character at a time tries each start once, not once
        # per character (with a marker of MAX_ANCHOR characters, 4,096 times a character).
        lo = max(pos, n - self.longest + 1, cache.get(None, 0))
        for start in range(lo, n):
            tail = text[start:]
            if any(len(lit) > len(tail) and lit.startswith(tail) for lit in self.literals):
                cache[None] = start
                return Match(start, n, partial=True), scan
        cache[None] = n
        return None, scan


def last_match_end(anchor: Literals | Pattern, text: str) -> int | None:
    """The end of the last of the non-overlapping matches of `anchor` in `text` (as
    `finditer` would list them), or None."""
    pos, last = 0, None
    scan: Scan | None = None
    while pos <= len(text):
        found, scan = anchor.search(text, pos, partial=False, scan=scan if anchor.literal else None)
        if found is None:
            break
        last = found.end
        pos = found.end if found.end > found.start else found.end + 1
    return last


def find_all(pattern: Pattern, text: str) -> list[Match]:
    """The non-overlapping matches of `pattern` in `text`, left to right."""
    found: list[Match] = []
    pos = 0
    while pos <= len(text):
        match, _ = pattern.search(text, pos, partial=False)
        if match is None:
            break
        found.append(match)
        pos = match.end if match.end > match.start else match.end + 1
    return found
