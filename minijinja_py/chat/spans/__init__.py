"""The spans stage: which characters of a rendered conversation are the assistant's turns.

Not to be confused with the engine's `minijinja_py.provenance`, which records where each
character of any render came from: this stage reads that record for a chat.

- `modes`: the mask modes a caller picks and the sources a result names;
- `blocks`: whether a template marks its turns itself (`{% generation %}`);
- `registry` and `tagged/`: hand-tagged copies of known templates;
- `traced`: the traced render of one conversation (`ChatProvenance`), named for a chat caller;
- `probes`: what a template writes around an assistant turn, read off probe renders;
- `inferred`: the rule that finds the turns in a traced render, and `overlap`, its searches
  for a header's start;
- `conventions`: the role-header and end-of-sequence conventions of inferred spans;
- `choose`: the spans of one conversation from the sources a mode allows.

Nothing here is imported by rendering text (tests/test_startup.py).
"""
