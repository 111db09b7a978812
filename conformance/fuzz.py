"""``python -m conformance.fuzz --seconds 600``: coverage-guided fuzzing of the whole pipeline.

atheris (libFuzzer) mutates template sources; each input goes through the lexer, the parser,
the compiler and a render with a small context chosen by the input's first byte, in both
presets, and through the chat layer (``ChatTemplate.from_string(...).render(messages)``). A
finding is anything but a ``TemplateError`` leaving the pipeline, or one input taking more than
``SLOW_SECONDS`` of CPU with small limits (work the limits do not count). libFuzzer writes each finding
to ``--artifacts`` as a file holding the input; ``--replay FILE`` runs one again.

The corpus (``.fuzz-corpus/``, not versioned) is seeded with the real chat templates of
``../shared/chat-templates`` and the templates of ``conformance/golden``. Not part of CI.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "chat-templates" / "templates"
GOLDEN = ROOT / "conformance" / "golden"
WORK = ROOT / ".fuzz-corpus"
SLOW_SECONDS = 2.0
MAX_LEN = 8192

# Small limits: a finding is about the kind of failure, not the size of the budget.
LIMIT_OPTIONS = {
    "max_steps": 20_000,
    "max_string": 200_000,
    "max_items": 20_000,
    "max_output": 500_000,
}

CONTEXTS = [
    {},
    {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi <there> & 'you'"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
                ],
            },
            {"role": "tool", "content": "42"},
            {"role": "user", "content": [{"type": "text", "text": "parts"}]},
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "add_generation_prompt": True,
        "bos_token": "<s>",
        "eos_token": "</s>",
    },
    {"x": [1, 2, 3], "d": {"a": 1, "_b": 2}, "s": "text", "n": None, "f": 1.5, "t": (1, "a")},
    {"big": "x" * 1000, "nums": list(range(100)), "nested": [[[[1]]]], "neg": -7},
]

MESSAGES = CONTEXTS[1]["messages"]


class Finding(AssertionError):
    """What the fuzzer reports: an escaped exception or a slow input."""


def seed_corpus() -> int:
    """Copy the seeds into the working corpus once; returns how many files it holds."""
    WORK.mkdir(exist_ok=True)
    if not any(WORK.iterdir()):
        count = 0
        if CORPUS.is_dir():
            for path in sorted(CORPUS.glob("*.jinja")):
                data = path.read_bytes()[:MAX_LEN]
                (WORK / f"chat-{path.stem}").write_bytes(b"\x01" + data)
                count += 1
        for path in sorted(GOLDEN.glob("*.txt")):
            text = path.read_bytes()
            head, sep, rest = text.partition(b"\n---\n")
            if not sep:
                continue
            source = rest.partition(b"\n===\n")[0]
            (WORK / f"golden-{path.stem}").write_bytes(bytes([count % len(CONTEXTS)]) + source)
            count += 1
    return sum(1 for _ in WORK.iterdir())


def run_one(data: bytes) -> None:
    """The property: only TemplateError leaves, and quickly."""
    import minijinja_py as mj

    if not data:
        return
    context = CONTEXTS[data[0] % len(CONTEXTS)]
    source = data[1:].decode("utf-8", errors="replace")
    limits = mj.Limits(**LIMIT_OPTIONS)
    # CPU time: a loaded machine must not make an input look slow
    start = time.process_time()
    for env in (mj.chat_environment(limits=limits), mj.Environment(limits=limits)):
        try:
            template = env.from_string(source)
            template.render(context)
        except mj.TemplateError:
            pass
        except BaseException as error:
            raise Finding(f"{type(error).__name__} escaped: {error!r:.300}") from error
    try:
        mj.ChatTemplate.from_string(source).render(MESSAGES, add_generation_prompt=True)
    except mj.TemplateError:
        pass
    except BaseException as error:
        raise Finding(f"chat layer: {type(error).__name__} escaped: {error!r:.300}") from error
    elapsed = time.process_time() - start
    if elapsed > SLOW_SECONDS:
        raise Finding(f"one input took {elapsed:.1f} s of CPU with small limits")


def _keep_going(folder: Path):
    """A target that saves each new kind of finding (input + message) and goes on."""
    import hashlib

    seen: set[str] = set()

    def target(data: bytes) -> None:
        try:
            run_one(data)
        except Finding as finding:
            kind = str(finding).split(":")[0][:80] if "escaped" in str(finding) else "slow"
            kind = f"{kind}:{str(finding)[:60]}" if "escaped" in str(finding) else kind
            if kind in seen:
                return
            seen.add(kind)
            digest = hashlib.sha1(data).hexdigest()[:12]
            (folder / f"finding-{digest}").write_bytes(data)
            (folder / f"finding-{digest}.txt").write_text(f"{finding}\n", encoding="utf-8")
            print(f"FINDING {digest}: {finding}", file=sys.stderr, flush=True)

    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.fuzz", description=__doc__)
    parser.add_argument("--seconds", type=int, default=600, help="total fuzzing time")
    parser.add_argument("--runs", type=int, default=-1, help="stop after this many inputs")
    parser.add_argument("--artifacts", default=str(ROOT / ".fuzz-findings"))
    parser.add_argument("--replay", metavar="FILE", help="run one saved input and report")
    parser.add_argument(
        "--stop-on-finding",
        action="store_true",
        help="stop at the first finding (default: save it and go on, one file per kind)",
    )
    args = parser.parse_args(argv)
    if args.replay:
        try:
            run_one(Path(args.replay).read_bytes())
        except Finding as finding:
            print(f"finding: {finding}")
            return 1
        print("no finding")
        return 0
    import atheris

    with atheris.instrument_imports(include=["minijinja_py", "lark"]):
        # Every module now, inside the hook: the engine imports many of its parts lazily,
        # and a module first imported after this block would run uninstrumented.
        import importlib
        import pkgutil

        import lark  # noqa: F401

        import minijinja_py

        for module in pkgutil.iter_modules(minijinja_py.__path__):
            if module.name not in ("__main__",):
                importlib.import_module(f"minijinja_py.{module.name}")
    print(f"corpus: {seed_corpus()} inputs in {WORK}", file=sys.stderr)
    os.makedirs(args.artifacts, exist_ok=True)
    libfuzzer_args = [
        sys.argv[0],
        str(WORK),
        f"-max_total_time={args.seconds}",
        f"-runs={args.runs}",
        f"-max_len={MAX_LEN}",
        "-timeout=20",
        "-rss_limit_mb=2048",
        f"-artifact_prefix={args.artifacts}/",
        "-print_final_stats=1",
    ]
    target = run_one if args.stop_on_finding else _keep_going(Path(args.artifacts))
    atheris.Setup(libfuzzer_args, target)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
