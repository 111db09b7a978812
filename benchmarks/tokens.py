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
    samples: dict[str, list[float]] = {name: [] for name in _ENGINES}
    for _ in range(args.repeats):
        for name, call in _ENGINES.items():  # interleaved, as benchmarks/run.py does
            start = time.process_time()
            for ours, reference, messages, options in work:
                call(ours, reference, messages, options)
            samples[name].append(time.process_time() - start)
    base = statistics.median(samples["transformers apply_chat_template(tokenize=True)"])
    print(f"{len(work)} conversations, median of {args.repeats} CPU-time repeats\n")
    print("| what | conversations / s | time / transformers tokenize |")
    print("|---|---:|---:|")
    for name, times in samples.items():
        seconds = statistics.median(times)
        print(f"| {name} | {len(work) / seconds:,.0f} | {seconds / base:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
