"""benchmarks.constructs splits a construct's time into what a render pays once and per message;
benchmarks.floor runs its concat statement as the least a tree-walker can do."""

import pytest

from benchmarks import constructs as bc
from benchmarks.engines import Jinja2Engine, OursEngine


def test_the_two_costs_are_read_from_a_short_and_a_long_conversation():
    # 4 messages in 10 s and 64 in 70 s: a second a message, 6 s once
    assert (bc.SHORT, bc.LONG) == (4, 64)
    assert bc.split_costs(10.0, 70.0) == (6.0, 1.0)
    assert bc.split_costs(2.0, 2.0) == (2.0, 0.0)


def test_messages_alternate_user_and_assistant():
    assert bc.messages(3) == [
        {"role": "user", "content": "hello world 0"},
        {"role": "assistant", "content": "hello world 1"},
        {"role": "user", "content": "hello world 2"},
    ]


@pytest.mark.parametrize("name", sorted(bc.CONSTRUCTS))
def test_every_construct_renders_as_jinja2_renders_it(name):
    ours, jinja2 = OursEngine(), Jinja2Engine()
    context = {"messages": bc.messages(bc.SHORT)}
    texts = [
        engine.render(engine.compile(engine.new_env(), bc.CONSTRUCTS[name]), context)
        for engine in (ours, jinja2)
    ]
    assert texts[0] == texts[1]
    assert texts[0]  # (each construct prints something for these messages)


def test_the_report_gives_both_costs_and_their_ratios():
    costs = {"item": {"ours": (3e-6, 0.25e-6), "jinja2": (12e-6, 0.125e-6)}}
    assert bc.report(costs).splitlines() == [
        "| construct | once: ours | once: Jinja2 | ours / Jinja2"
        " | per message: ours | per message: Jinja2 | ours / Jinja2 |",
        "|---|---:|---:|---:|---:|---:|---:|",
        "| item | 3.0 µs | 12.0 µs | 0.25 | 0.25 µs | 0.12 µs | 2.00 |",
    ]


def test_a_corpus_template_is_rendered_with_a_system_message_first():
    context = bc.template_contexts(2)
    assert context["messages"] == [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "hello world 0"},
        {"role": "assistant", "content": "hello world 1"},
    ]
    assert (context["add_generation_prompt"], context["bos_token"], context["eos_token"]) == (
        True,
        "<s>",
        "</s>",
    )


def test_a_template_the_engines_render_differently_is_refused():
    with pytest.raises(RuntimeError, match="^odd: the engines render different text$"):
        bc.measure([_Fixed("a"), _Fixed("b")], {"odd": "x"}, 1)


class _Fixed:
    """An engine that renders one fixed text whatever the template."""

    def __init__(self, text):
        self.key = text
        self.text = text

    def new_env(self):
        return None

    def compile(self, env, source):
        return source

    def render(self, template, context):
        return self.text


@pytest.mark.parametrize("joined", [False, True])
def test_the_floor_walkers_render_the_concat_statement_as_jinja2(joined):
    from benchmarks.floor import STATEMENT, FloorWalker

    walker, jinja2 = FloorWalker("floor", "floor", joined), Jinja2Engine()
    context = {"messages": bc.messages(2)}
    expected = "<|im_start|>user\nhello world 0<|im_end|>\n<|im_start|>assistant\nhello world 1<|im_end|>\n"
    assert walker.render(walker.compile(None, STATEMENT), context) == expected
    assert jinja2.render(jinja2.compile(jinja2.new_env(), STATEMENT), context) == expected


def test_the_floor_walker_runs_nothing_but_its_statement():
    from benchmarks.floor import FloorWalker

    with pytest.raises(ValueError, match="^the floor walker runs only the concat statement$"):
        FloorWalker("floor", "floor", True).compile(None, "{{ x }}")
