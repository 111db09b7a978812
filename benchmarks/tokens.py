"""Conversations per second: render, render_with_provenance and tokenize against transformers.

``python -m benchmarks.tokens`` (needs the ``parity`` extra and the corpus).  For every corpus
template a model folder is built offline (conformance/tokens_parity.py: the small BPE with the
template's control tokens); each engine handles every corpus conversation both render, and the
figure is conversations per CPU second over the whole corpus (median of the repeats).

- ``render``: ``ChatTemplate.render`` (text only);
- ``provenance``: ``ChatTemplate.render_with_provenance`` (sources, inferred assistant spans);
- ``tokenize``: ``ChatTemplate.tokenize`` (ids and attention mask, one encode);
- ``tokenize + mask``: ``tokenize(return_assistant_tokens_mask=True)`` (masks from generation
  blocks, else from the inferred spans, which need a render with provenance);
- ``transformers``: ``AutoTokenizer.apply_chat_template(tokenize=True, return_dict=True)``.

``--tagged`` times the training path instead: ``tokenize(return_assistant_tokens_mask=True)``
against ``apply_chat_template(tokenize=True, return_dict=True,
return_assistant_tokens_mask=True)`` on the templates with ``{% generation %}`` blocks (the
hand-tagged copies in minijinja_py/chat/spans/tagged and the corpus templates that ship tags), each
in its model folder, on the pairs where both give the same lists; it prints each template's
ratio and their median.  ``--batch N`` times batches instead: per tagged template, N of its
agreeing conversations that take no options (cycled to N), in one call, padded as numpy arrays
with masks: our ``apply_chat_template`` against transformers' batched call (which encodes the
batch on the tokenizers library's own threads), and ``tokenize`` of the batch; wall and CPU
time, since the threads make the two differ.  ``--against REV`` adds the engine of an earlier commit (imported as
``benchmarks.ab`` imports it) to the same rotation: before and after in one process.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _provenance_workload(
    limit: int | None, old: Any = None
) -> list[tuple[Any, Any, Any, list[Any], dict[str, Any]]]:
    # (no model folders: the template and its special tokens, as conformance reads them)
    from conformance.corpus import _meta, conversation_names, template_names, template_source
    from conformance.tokens_parity import conversation
    from minijinja_py import ChatTemplate

    work = []
    for name in list(template_names())[:limit]:
        meta = _meta().get(name, {})
        special = {key: meta[key] for key in ("bos_token", "eos_token") if meta.get(key)}
        ours = ChatTemplate.from_string(template_source(name), special)
        before = (
            None if old is None else old.ChatTemplate.from_string(template_source(name), special)
        )
        for conversation_name in conversation_names():
            messages, options = conversation(name, conversation_name)
            try:
                ours.render_with_provenance(messages, **options)
                if before is not None:
                    before.render_with_provenance(messages, **options)
            except Exception:  # timed on the pairs every engine renders
                continue
            work.append((name, ours, before, None, messages, options))
    return work


def _workload(
    limit: int | None, tagged: bool = False, old: Any = None
) -> list[tuple[Any, Any, Any, list[Any], dict[str, Any]]]:
    import transformers
    from transformers import AutoTokenizer

    from conformance.assistant_spans import tagged_names
    from conformance.corpus import conversation_names, template_names
    from conformance.tokens_parity import conversation, model_folder
    from minijinja_py import ChatTemplate

    transformers.logging.set_verbosity_error()
    work = []
    names = tagged_names() if tagged else list(template_names())
    for name in names[:limit]:
        folder = model_folder(name, tagged=tagged)
        ours = ChatTemplate.from_pretrained(folder)
        before = None if old is None else old.ChatTemplate.from_pretrained(folder)
        reference = AutoTokenizer.from_pretrained(str(folder))
        for conversation_name in conversation_names():
            messages, options = conversation(name, conversation_name)
            try:
                got = ours.tokenize(messages, return_assistant_tokens_mask=True, **options)
                if tagged:
                    expected = reference.apply_chat_template(
                        messages,
                        tokenize=True,
                        return_dict=True,
                        return_assistant_tokens_mask=True,
                        **options,
                    )
                    if dict(got) != {key: list(value) for key, value in expected.items()}:
                        continue  # (timed where both give the same lists)
                else:
                    ours.render_with_provenance(messages, **options)
                    reference.apply_chat_template(
                        messages, tokenize=True, return_dict=True, **options
                    )
                if before is not None:
                    before.tokenize(messages, return_assistant_tokens_mask=True, **options)
                    if not tagged:
                        before.render_with_provenance(messages, **options)
            except Exception:  # timed on the pairs every engine renders
                continue
            work.append((name, ours, before, reference, messages, options))
    return work


_TRANSFORMERS = "transformers apply_chat_template(tokenize=True)"
_TRANSFORMERS_MASK = "transformers apply_chat_template(tokenize=True, assistant mask)"
_ENGINES = {
    "render": lambda pair, ref, m, o: pair[0].render(m, **o),
    "render_with_provenance": lambda pair, ref, m, o: pair[0].render_with_provenance(m, **o),
    "tokenize": lambda pair, ref, m, o: pair[0].tokenize(m, **o),
    "tokenize + assistant mask": lambda pair, ref, m, o: pair[0].tokenize(
        m, return_assistant_tokens_mask=True, **o
    ),
    _TRANSFORMERS: lambda pair, ref, m, o: ref.apply_chat_template(
        m, tokenize=True, return_dict=True, **o
    ),
}
_TAGGED_ENGINES = {
    "tokenize + assistant mask": _ENGINES["tokenize + assistant mask"],
    _TRANSFORMERS_MASK: lambda pair, ref, m, o: ref.apply_chat_template(
        m, tokenize=True, return_dict=True, return_assistant_tokens_mask=True, **o
    ),
}


def interleaved(
    work: list[tuple[Any, ...]], engines: dict[str, Any], repeats: int, clock: str = "cpu"
) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, dict[str, float]]]:
    """(the work grouped by template, each engine's median CPU seconds per template).

    Interleaved per template (its conversations, each engine in turn, the order rotating
    between repeats), so that a machine whose speed drifts over a pass slows every engine
    alike; sums over templates are then taken from each template's median.
    """
    groups: dict[str, list[tuple[Any, ...]]] = {}
    for item in work:
        groups.setdefault(item[0], []).append(item)
    names = list(engines)
    # (CPU time counts every thread's; wall time is what a caller waits for a batch encoded
    # on the library's threads)
    now = time.process_time if clock == "cpu" else time.perf_counter
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for repeat in range(repeats):
        order = names[repeat % len(names) :] + names[: repeat % len(names)]
        for key, group in groups.items():
            for name in order:
                call = engines[name]
                _forget_pieces(group)
                gc.collect()  # (a collection earlier samples made due lands outside this one)
                start = now()
                for _, ours, before, reference, messages, options in group:
                    call((ours, before), reference, messages, options)
                samples[name].setdefault(key, []).append(now() - start)
    medians = {
        name: {key: statistics.median(times) for key, times in per_group.items()}
        for name, per_group in samples.items()
    }
    return groups, medians


_BATCH_OPTIONS = {
    "tokenize": True,
    "return_dict": True,
    "return_assistant_tokens_mask": True,
    "padding": True,
    "return_tensors": "np",
}


def _batch_workload(size: int, old: Any = None) -> list[tuple[Any, ...]]:
    # (name, ours, before, reference, a batch of `size` conversations, {}): the tagged pairs
    # that agree and take no options, cycled to `size` (a batch shares its options), each
    # cycle's texts made distinct.
    batches: dict[str, tuple[Any, ...]] = {}
    for name, ours, before, reference, messages, options in _workload(None, True, old):
        eos = ours.special_tokens.get("eos_token")
        if options or eos is None:
            continue
        if name not in batches:
            # (padding needs a pad token, which the model folders do not name: the end of
            # sequence's, on both sides, as transformers' own error suggests)
            ours.special_tokens["pad_token"] = reference.pad_token = eos
            if before is not None:
                before.special_tokens["pad_token"] = eos
            batches[name] = (name, ours, before, reference, [], {})
        batches[name][4].append(messages)
    for _, _, _, _, chats, _ in batches.values():
        chats[:] = [
            _distinct(chats[index % len(chats)], index // len(chats)) for index in range(size)
        ]
    return list(batches.values())


def _batch_engines() -> dict[str, Any]:
    options = dict(_BATCH_OPTIONS)
    return {
        "apply_chat_template (padded, np)": lambda pair, ref, m, o: pair[0].apply_chat_template(
            m, **options
        ),
        _TOKENIZE_BATCH: lambda pair, ref, m, o: pair[0].tokenize(
            m, return_assistant_tokens_mask=True
        ),
        _TRANSFORMERS_BATCH: lambda pair, ref, m, o: ref.apply_chat_template(m, **options),
    }


_TRANSFORMERS_BATCH = "transformers apply_chat_template (padded, np)"
_TOKENIZE_BATCH = "tokenize + assistant mask"


def _main_batch(size: int, repeats: int, old: Any, against: str | None) -> int:
    work = _batch_workload(size, old)
    engines = _batch_engines()
    if old is not None:
        for name in [name for name in engines if name != _TRANSFORMERS_BATCH]:
            engines[f"{name} @ {against}"] = _earlier(engines[name])
    rows = []
    for clock in ("wall", "cpu"):
        _, medians = interleaved(work, engines, repeats, clock)
        totals = {name: sum(per_group.values()) for name, per_group in medians.items()}
        base = totals[_TRANSFORMERS_BATCH]
        for name, seconds in totals.items():
            per = sorted(
                medians[name][key] / medians[_TRANSFORMERS_BATCH][key] for key in medians[name]
            )
            rows.append((clock, name, seconds / base, statistics.median(per), per[-1]))
    print(f"{len(work)} templates, batches of {size} conversations; per template the median of")
    print(f"{repeats} interleaved repeats, summed\n")
    print("| clock | what | time / transformers | per template: median | worst |")
    print("|---|---|---:|---:|---:|")
    for clock, name, ratio, median, worst in rows:
        print(f"| {clock} | {name} | {ratio:.2f} | {median:.2f} | {worst:.2f} |")
    return 0


def _forget_pieces(group: list[tuple[Any, ...]]) -> None:
    # The token ids a model keeps of pieces of text (chat/pieces.py) are forgotten before each
    # pass: repeats of the same conversations would otherwise find every piece kept, which a
    # data set's distinct rows do not.  Within a pass a template's conversations share what
    # rows share (its text around turns, a system prompt, tools).
    for _, ours, before, _, _, _ in group:
        for model in (ours, before):
            pieces = getattr(getattr(model, "kept", None), "pieces", None)
            if pieces is not None:
                pieces.clear()


def _distinct(messages: list[Any], copy: int) -> list[Any]:
    # A copy of a conversation whose every text differs from the other copies' (a suffix),
    # so that a batch cycled from a template's few conversations holds distinct rows.
    if not copy:
        return messages
    result = []
    for message in messages:
        message = dict(message)
        content = message.get("content")
        if isinstance(content, str) and content:
            message["content"] = f"{content} ({copy})"
        elif isinstance(content, list):
            message["content"] = [
                {**part, "text": f"{part['text']} ({copy})"}
                if isinstance(part, dict) and isinstance(part.get("text"), str)
                else part
                for part in content
            ]
        result.append(message)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--templates", type=int, default=None, help="only the first N templates")
    parser.add_argument(
        "--tagged", action="store_true", help="the training path on the tagged templates"
    )
    parser.add_argument(
        "--batch", type=int, metavar="N", help="batches of N conversations (see the docstring)"
    )
    parser.add_argument("--against", metavar="REV", help="also time the engine of REV")
    parser.add_argument(
        "--provenance",
        action="store_true",
        help="only render and render_with_provenance (no model folders, no transformers)",
    )
    args = parser.parse_args(argv)
    old = None
    if args.against:
        import tempfile

        from benchmarks.ab import import_at

        old = import_at(args.against, Path(tempfile.mkdtemp(prefix="minijinja-py-tokens-")))
    if args.batch:
        return _main_batch(args.batch, args.repeats, old, args.against)
    if args.provenance:
        work = _provenance_workload(args.templates, old)
        engines = {name: _ENGINES[name] for name in ("render", "render_with_provenance")}
    else:
        work = _workload(args.templates, args.tagged, old)
        engines = dict(_TAGGED_ENGINES if args.tagged else _ENGINES)
    if old is not None:
        calls = [] if args.provenance else ["tokenize + assistant mask"]
        if not args.tagged:
            calls += ["render", "render_with_provenance"]
        for name in calls:
            engines[f"{name} @ {args.against}"] = _earlier(engines[name])
    names = list(engines)
    groups, medians = interleaved(work, engines, args.repeats)
    totals = {name: sum(per_group.values()) for name, per_group in medians.items()}
    base_name = _TRANSFORMERS_MASK if args.tagged else _TRANSFORMERS
    if args.provenance:
        base_name = "render"
    base = totals[base_name]
    print(f"{len(work)} conversations, {len(groups)} templates, CPU time: per template the")
    print(f"median of {args.repeats} interleaved repeats, summed\n")
    against = "render" if args.provenance else "transformers tokenize"
    print(f"| what | conversations / s | time / {against} |")
    print("|---|---:|---:|")
    for name, seconds in totals.items():
        print(f"| {name} | {len(work) / seconds:,.0f} | {seconds / base:.2f} |")
    if args.tagged:
        print("\n| template | pairs | " + " | ".join(n for n in names if n != base_name) + " |")
        print("|---|---:|" + "---:|" * (len(names) - 1))
        ratios: dict[str, list[float]] = {name: [] for name in names if name != base_name}
        for key, group in groups.items():
            row = []
            for name in ratios:
                ratio = medians[name][key] / medians[base_name][key]
                ratios[name].append(ratio)
                row.append(f"{ratio:.2f}")
            print(f"| {key} | {len(group)} | " + " | ".join(row) + " |")
        for name, values in ratios.items():
            values.sort()
            print(
                f"\n{name} / transformers with masks, per template: median"
                f" {statistics.median(values):.2f}, best {values[0]:.2f}, worst {values[-1]:.2f}"
            )
        return 0
    ratio = totals["render_with_provenance"] / totals["render"]
    print(f"\nrender_with_provenance / render: {ratio:.2f}")
    per_template = [
        medians["render_with_provenance"][key] / medians["render"][key] for key in groups
    ]
    print(f"  per template: median {statistics.median(per_template):.2f}")
    if old is not None:
        then = totals[f"render_with_provenance @ {args.against}"]
        then /= totals[f"render @ {args.against}"]
        earlier = [
            medians[f"render_with_provenance @ {args.against}"][key]
            / medians[f"render @ {args.against}"][key]
            for key in groups
        ]
        print(
            f"  at {args.against}: {then:.2f}, per template: median {statistics.median(earlier):.2f}"
        )
    return 0


def _earlier(call: Any) -> Any:
    return lambda pair, ref, m, o: call((pair[1], None), ref, m, o)


if __name__ == "__main__":
    raise SystemExit(main())
