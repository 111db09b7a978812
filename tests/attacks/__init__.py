"""The attack suite: hostile templates and inputs by class, each run in a worker process capped
at 1 GiB of address space and killed after a few seconds, each with one exact expected outcome.

``python -m tests.attacks`` prints a table of held / failed attacks by class;
``python -m pytest tests/attacks`` runs them as tests.
"""
