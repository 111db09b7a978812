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
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _workload(limit: int | None) -> list[tuple[Any, Any, list[Any], dict[str, Any]]]:
    import transformers
    from transformers import AutoTokenizer

    from conformance.corpus import conversation_names, template_names
    from conformance.tokens_parity import conversation, model_folder
    from minijinja_py import ChatTemplate

    transformers.logging.set_verbosity_error()
    work = []
    for name in list(template_names())[:limit]:
        folder = model_folder(name, tagged=False)
        ours = ChatTemplate.from_pretrained(folder)
        reference = AutoTokenizer.from_pretrained(str(folder))
        for conversation_name in conversation_names():
            messages, options = conversation(name, conversation_name)
            try:
                ours.tokenize(messages, return_assistant_tokens_mask=True, **options)
                ours.render_with_provenance(messages, **options)
                reference.apply_chat_template(messages, tokenize=True, return_dict=True, **options)
            except Exception:  # timed on the pairs every engine renders
                continue
            work.append((ours, reference, messages, options))
    return work


_ENGINES = {
    "render": lambda ours, ref, m, o: ours.render(m, **o),
    "render_with_provenance": lambda ours, ref, m, o: ours.render_with_provenance(m, **o),
    "tokenize": lambda ours, ref, m, o: ours.tokenize(m, **o),
    "tokenize + assistant mask": lambda ours, ref, m, o: ours.tokenize(
        m, return_assistant_tokens_mask=True, **o
    ),
    "transformers apply_chat_template(tokenize=True)": lambda ours, ref, m, o: (
        ref.apply_chat_template(m, tokenize=True, return_dict=True, **o)
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--templates", type=int, default=None, help="only the first N templates")
    args = parser.parse_args(argv)
    work = _workload(args.templates)
    # Interleaved per template (its conversations, each engine in turn, the order rotating
    # between repeats), and summed over templates from each template's median: a machine
    # whose speed drifts over a pass slows every engine alike.
    groups: dict[int, list[tuple[Any, Any, list[Any], dict[str, Any]]]] = {}
    for item in work:
        groups.setdefault(id(item[0]), []).append(item)
    names = list(_ENGINES)
    samples: dict[str, dict[int, list[float]]] = {name: {} for name in names}
    for repeat in range(args.repeats):
        order = names[repeat % len(names) :] + names[: repeat % len(names)]
        for key, group in groups.items():
            for name in order:
                call = _ENGINES[name]
                start = time.process_time()
                for ours, reference, messages, options in group:
                    call(ours, reference, messages, options)
                samples[name].setdefault(key, []).append(time.process_time() - start)
    totals = {
        name: sum(statistics.median(times) for times in per_group.values())
        for name, per_group in samples.items()
    }
    base = totals["transformers apply_chat_template(tokenize=True)"]
    print(f"{len(work)} conversations, {len(groups)} templates, CPU time: per template the")
    print(f"median of {args.repeats} interleaved repeats, summed\n")
    print("| what | conversations / s | time / transformers tokenize |")
    print("|---|---:|---:|")
    for name, seconds in totals.items():
        print(f"| {name} | {len(work) / seconds:,.0f} | {seconds / base:.2f} |")
    ratio = totals["render_with_provenance"] / totals["render"]
    print(f"\nrender_with_provenance / render: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
