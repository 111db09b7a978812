"""Conformance suite: minijinja_py against Jinja2 3.1.6 (the reference).

- ``reference``: the Jinja2 reference environments and the matching configuration of our engine.
- ``corpus``: the real chat-template corpus (``../shared/chat-templates``).
- ``strategies``: Hypothesis strategies generating templates of the chat-template dialect.
- ``golden/``: small static cases, one feature each, with Jinja2's output.

Run ``python -m conformance report`` for a differential report by feature.
"""
