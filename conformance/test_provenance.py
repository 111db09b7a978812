"""render_with_provenance over the whole corpus: render()'s text or error, and sources that hold.

For every pair: the text is render()'s byte for byte (or both fail with the same error); every
segment traced exactly names a substring of its source that equals the text it covers; and every
occurrence in the text of a distinctive caller string (12 characters or more, not in the
template) is attributed to some source.
"""

from __future__ import annotations

from typing import Any

import pytest

from minijinja_py.errors import TemplateError

from .corpus import _ours_template, context, corpus_missing, pairs

_PAIRS = pairs()


def _value_at(ctx: dict[str, Any], path: tuple) -> Any:
    value: Any = ctx
    for step in path:
        value = value[step]
    return value


def _strings(value: Any, path: tuple, found: list) -> None:
    if isinstance(value, str):
        found.append((path, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(item, (*path, key), found)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _strings(item, (*path, index), found)


@pytest.mark.parametrize("pair", _PAIRS or [None], ids=[p.id for p in _PAIRS] or ["corpus"])
def test_provenance_of_pair(pair):
    missing = corpus_missing()
    if missing:
        pytest.skip(missing)
    template = _ours_template(pair.template)
    ctx = context(pair)
    try:
        expected = template.render(ctx)
    except TemplateError as error:
        with pytest.raises(type(error)) as raised:
            template.render_with_provenance(context(pair))
        assert str(raised.value) == str(error)
        return
    result = template.render_with_provenance(context(pair))
    assert result.text == expected
    for segment in result.segments:
        if segment.verbatim:
            source = _value_at(ctx, segment.path)
            length = segment.end - segment.start
            assert (
                source[segment.offset : segment.offset + length]
                == expected[segment.start : segment.end]
            ), segment
    covered = bytearray(len(expected))
    for segment in result.segments:
        covered[segment.start : segment.end] = b"\1" * (segment.end - segment.start)
    found: list = []
    _strings(ctx, (), found)
    for path, value in found:
        if len(value) < 12 or value in template.source:
            continue
        start = expected.find(value)
        while start >= 0:
            assert all(covered[start : start + len(value)]), (path, value)
            start = expected.find(value, start + 1)
