"""Branches of an `if` compiled when they first run (run/deferred.py): the same text, the same
steps and the same errors as compiling them with the template, whichever branch runs first,
in one thread or in many."""

import sys
import threading
from pathlib import Path

import pytest

import minijinja_py as mj
from minijinja_py.compile import compiler as compiler_module
from minijinja_py.compile.analysis import DEFERRED_DEPTH
from minijinja_py.errors import TemplateRuntimeError, TemplateSyntaxError
from minijinja_py.run.branches import IfSwitch
from minijinja_py.run.deferred import DeferredBody
from minijinja_py.run.macros import DefineMacro
from minijinja_py.run.statements import If, Sequence
from minijinja_py.sandbox.budget import current_budget

# (appended: the compiled build's suite imports minijinja_py from where it is installed)
sys.path.append(str(Path(__file__).resolve().parents[1]))
from conformance import corpus  # noqa: E402
from conformance.reference import pinned_strftime_now  # noqa: E402


def _counting_environment() -> mj.Environment:
    """An environment whose `steps()` prints the steps the render has taken so far, and whose
    clock is pinned: two renders of a template that prints the time (Hunyuan's) a second apart
    would otherwise differ."""
    env = mj.chat_environment()
    env.globals["steps"] = lambda: current_budget().steps
    env.globals["strftime_now"] = pinned_strftime_now
    return env


def _eager(monkeypatch, source: str, env: mj.Environment | None = None):
    monkeypatch.setattr(compiler_module, "DEFERRING", False)
    try:
        return (env or _counting_environment()).from_string(source)
    finally:
        monkeypatch.setattr(compiler_module, "DEFERRING", True)


def _outcome(template, context):
    try:
        return template.render(**context)
    except mj.TemplateError as error:
        return type(error).__name__, error.message, error.lineno, error.colno


ROLES = (
    "{% for m in messages %}{% if m['role'] == 'system' %}<s>{{ m['content'] }}"
    "{% elif m['role'] == 'user' %}<u>{{ m['content'] | trim }}"
    "{% elif m['role'] == 'assistant' %}<a>{% if m['tool_calls'] %}{{ m['tool_calls'] | tojson }}"
    "{% else %}{{ m['content'] }}{% endif %}{% else %}{{ raise_exception('bad role') }}{% endif %}"
    "[{{ steps() }}]{% endfor %}"
    "{% if add_generation_prompt %}<a>{% else %}{{ steps() }}{% endif %}"
)
CONVERSATIONS = [
    {"messages": [{"role": "user", "content": " hi "}], "add_generation_prompt": True},
    {
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": "y", "tool_calls": [{"name": "f"}]},
        ]
    },
    {"messages": [{"role": "tool", "content": "z"}]},
]


@pytest.mark.parametrize("first", range(len(CONVERSATIONS)))
def test_every_render_equals_the_eagerly_compiled_templates_whichever_runs_first(
    monkeypatch, first
):
    eager = _eager(monkeypatch, ROLES)
    deferred = _counting_environment().from_string(ROLES)
    order = CONVERSATIONS[first:] + CONVERSATIONS[:first]
    for context in order + order:
        assert _outcome(deferred, context) == _outcome(eager, context)


def test_a_branch_is_compiled_when_it_first_runs_and_takes_its_place():
    template = mj.Environment().from_string("{% if x %}{{ a.b }}{% else %}{{ c }}!{% endif %}")
    branch = template._run
    assert type(branch) is If
    assert type(branch.body) is DeferredBody and type(branch.otherwise) is DeferredBody
    assert template.render(x=True, a={"b": 1}) == "1"
    assert type(branch.body) is not DeferredBody and branch.body_cost == branch.body.cost
    assert type(branch.otherwise) is DeferredBody
    assert template.render(x=False, c=2) == "2!"
    assert type(branch.otherwise) is Sequence and branch.otherwise_cost == branch.otherwise.cost


def test_a_role_chains_branches_are_put_in_its_switch_too():
    template = mj.Environment().from_string(
        "{% for m in messages %}{% if m['role'] == 'user' %}U{{ m.content }}"
        "{% elif m['role'] == 'assistant' %}A{{ m.content }}{% endif %}{% endfor %}"
    )
    loop_body = template._run.body
    assert type(loop_body) is IfSwitch
    assert [type(body) for _, body in loop_body.branches.values()] == [DeferredBody] * 2
    assert template.render(messages=[{"role": "user", "content": "1"}]) == "U1"
    kinds = {role: type(body) for role, (_, body) in loop_body.branches.items()}
    assert kinds["assistant"] is DeferredBody and kinds["user"] is not DeferredBody
    steps, body = loop_body.branches["user"]
    assert steps == body.cost  # (the first test passed, this branch's body)


def test_a_macro_is_compiled_at_its_first_call_and_charges_its_whole_cost_there():
    source = (
        "{% macro unused(x) %}{{ x.y }}{% endmacro %}"
        "{% macro used(x) %}<{{ x }}>{% if x %}{{ x * 2 }}{% endif %}{% endmacro %}"
        "{{ used(n) }}"
    )
    template = mj.Environment().from_string(source)
    definitions = [item.definition for item in template._run.items if type(item) is DefineMacro]
    assert [type(d.body) for d in definitions] == [DeferredBody, DeferredBody]
    cost_before = definitions[1].cost
    assert template.render(n=2) == "<2>4"
    assert type(definitions[0].body) is DeferredBody
    used = definitions[1]
    assert type(used.body) is not DeferredBody and used.cost == cost_before + used.body.cost


def _least_steps(source: str) -> int:
    """The smallest max_steps under which a template compiled afresh from `source` renders."""
    low, high = 1, 4096
    while low < high:
        middle = (low + high) // 2
        env = mj.Environment(limits=mj.Limits(max_steps=middle))
        try:
            env.from_string(source).render(n=3)
            high = middle
        except mj.LimitError:
            low = middle + 1
    return low


@pytest.mark.parametrize(
    "source",
    [
        "{% macro m(x) %}{% for i in range(x) %}{{ i }}{% endfor %}{% endmacro %}{{ m(n) }}{{ m(n) }}",
        "{% for i in range(n) %}{% if i %}{{ i }}{% else %}{{ -i }}{% endif %}{% endfor %}",
        "{% macro m(x) %}{% if x %}{{ m(x - 1) }}{% endif %}{% endmacro %}{{ m(n) }}",
    ],
)
def test_a_render_stops_at_the_same_step_as_the_eagerly_compiled_templates(monkeypatch, source):
    deferred = _least_steps(source)
    monkeypatch.setattr(compiler_module, "DEFERRING", False)
    assert _least_steps(source) == deferred


def test_text_alone_is_compiled_with_the_template():
    template = mj.Environment().from_string("{% if x %}yes{% else %}no{% endif %}")
    assert type(template._run.body) is not DeferredBody
    assert type(template._run.otherwise) is not DeferredBody


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{% if false %}{% break %}{% endif %}", "'break' outside loop"),
        ("{% if false %}{% continue %}{% endif %}", "'continue' not properly in loop"),
        (
            "{% if false %}{% for x in y %}{% macro m() %}{% break %}{% endmacro %}"
            "{% endfor %}{% endif %}",
            "'break' outside loop",
        ),
        (
            "{% for x in y %}{% if false %}{% set loop = 1 %}{% endif %}{% endfor %}",
            "Can't assign to special loop variable in for-loop target",
        ),
        (
            "{% if false %}{% for loop in y %}{% endfor %}{% endif %}",
            "Can't assign to special loop variable in for-loop target",
        ),
        (
            "{% if false %}{% for x in y %}{{ x | nope }}{% endfor %}{% endif %}",
            "No filter named 'nope'.",
        ),
        (
            "{% if false %}{% for x in y %}{{ x is nope }}{% endfor %}{% endif %}",
            "No test named 'nope'.",
        ),
        (
            "{% if false %}{% filter nope %}x{% endfilter %}{% endif %}",
            "No filter named 'nope'.",
        ),
        (
            "{% if false %}{% macro m(a, a) %}{% endmacro %}{% endif %}",
            "duplicate argument 'a' in macro definition",
        ),
        (
            "{% if false %}{% call(caller) f() %}{% endcall %}{% endif %}",
            'When defining macros or call blocks the special "caller" argument must be omitted'
            " or be given a default.",
        ),
        (
            "{% if false %}{% block a %}{% endblock %}{% endif %}{% block a %}{% endblock %}",
            "block 'a' defined twice",
        ),
    ],
)
def test_what_compiling_a_branch_refuses_is_refused_with_the_template(source, message):
    with pytest.raises(TemplateSyntaxError) as caught:
        mj.chat_environment().from_string(source)  # (with `break` and `continue`)
    assert caught.value.message == message


def test_an_unknown_filter_in_a_branch_fails_only_when_the_branch_runs(monkeypatch):
    source = "{% if x %}{{ y | nope }}{% endif %}ok"
    template = mj.Environment().from_string(source)
    assert template.render(x=False) == "ok"
    with pytest.raises(TemplateRuntimeError) as caught:
        template.render(x=True, y=1)
    assert (caught.value.message, caught.value.lineno, caught.value.colno) == (
        "No filter named 'nope' found.",
        1,
        18,
    )
    eager = _eager(monkeypatch, source, mj.Environment())
    assert _outcome(eager, {"x": True, "y": 1}) == _outcome(template, {"x": True, "y": 1})


def test_a_branch_compiled_later_uses_the_filters_and_tests_the_template_was_compiled_with(
    monkeypatch,
):
    source = "{% if x %}{{ 'a' | shout }}{{ 'b' is loud }}{% endif %}"

    def compiled(eagerly: bool):
        env = mj.Environment()
        env.filters["shout"] = lambda text: text.upper() + "!"
        env.tests["loud"] = lambda text: True
        template = _eager(monkeypatch, source, env) if eagerly else env.from_string(source)
        env.filters["shout"] = lambda text: "changed"
        del env.tests["loud"]
        return template.render(x=True)

    assert compiled(eagerly=False) == compiled(eagerly=True) == "A!True"


def test_a_template_that_reads_self_compiles_every_branch_with_it():
    source = "{% if x %}{{ self.a() }}{% endif %}{% block a %}A{% endblock %}"
    template = mj.Environment().from_string(source)
    assert type(template._run.body.first.body) is not DeferredBody
    assert template.render(x=True) == "AA"
    assert template.render(x=False) == "A"


def test_a_branch_holding_a_node_nested_too_deep_for_the_render_stack_is_compiled_now():
    deep = "(" * DEFERRED_DEPTH + "1" + ")" * DEFERRED_DEPTH
    template = mj.Environment().from_string(f"{{% if x %}}{{{{ {deep} }}}}{{% endif %}}")
    assert type(template._run.body) is not DeferredBody
    shallow = mj.Environment().from_string("{% if x %}{{ ((x)) }}{% endif %}")
    assert type(shallow._run.body) is DeferredBody


THREADED = "".join(
    f"{{% if n == {i} %}}<{{{{ n * {i} }}}}>{{% else %}}[{{{{ n }}}}]{{% endif %}}" for i in range(40)
)


def _render_in_threads(template, threads: int = 8, rounds: int = 5) -> dict[int, list[str]]:
    """Each thread renders `template` with its own `n`, all starting together."""
    start = threading.Barrier(threads)
    results: dict[int, list[str]] = {n: [] for n in range(threads)}

    def render(n: int) -> None:
        start.wait()
        for _ in range(rounds):
            results[n].append(template.render(n=n))

    running = [threading.Thread(target=render, args=(n,)) for n in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    return results


def test_renders_in_many_threads_give_the_eager_text_and_leave_every_taken_branch_compiled(
    monkeypatch,
):
    eager = _eager(monkeypatch, THREADED, mj.Environment())
    template = mj.Environment().from_string(THREADED)
    results = _render_in_threads(template)
    assert results == {n: [eager.render(n=n)] * 5 for n in range(8)}
    chain = template._run.items
    assert [type(link.body) is DeferredBody for link in chain] == [False] * 8 + [True] * 32
    assert {type(link.otherwise) for link in chain} == {Sequence}


@pytest.mark.skipif(mj.COMPILED, reason="a compiled Compiler's methods can't be wrapped")
def test_renders_in_many_threads_compile_each_branch_once(monkeypatch):
    template = mj.Environment().from_string(THREADED)
    compiled = []
    original = compiler_module.Compiler.body

    def counting_body(self, nodes):
        compiled.append(nodes)
        return original(self, nodes)

    monkeypatch.setattr(compiler_module.Compiler, "body", counting_body)
    _render_in_threads(template)
    # each branch's nodes once: 40 `else` branches, and the 8 `if` branches the renders took
    assert len(compiled) == len({id(nodes) for nodes in compiled}) == 48


@pytest.mark.skipif(corpus.corpus_missing() is not None, reason=str(corpus.corpus_missing()))
def test_the_corpus_renders_and_counts_steps_as_when_compiled_with_the_template(monkeypatch):
    names = corpus.template_names()
    conversations = corpus.conversation_names()
    env = _counting_environment()
    for index, name in enumerate(names):
        source = corpus.template_source(name) + "{{ steps() }}"
        eager = _eager(monkeypatch, source, env)
        deferred = env.from_string(source)
        # a different conversation first for each template, then all of them
        first = conversations[index % len(conversations)]
        for conversation in (first, *conversations):
            context = corpus.context(corpus.Pair(name, conversation))
            assert _outcome(deferred, context) == _outcome(eager, context), (name, conversation)
