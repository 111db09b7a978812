"""benchmarks.by_conversation splits the warm figure by conversation and by tool use."""

from benchmarks import by_conversation as bc


def test_a_conversation_uses_tools_by_its_tools_its_calls_or_a_tools_answer():
    assert not bc.uses_tools({"messages": [{"role": "user", "content": "hi"}], "tools": None})
    assert not bc.uses_tools({"messages": [], "tools": []})
    assert bc.uses_tools({"messages": [], "tools": [{"type": "function"}]})
    called = {"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}
    assert bc.uses_tools({"messages": [called]})
    assert bc.uses_tools({"messages": [{"role": "tool", "content": "22"}]})
    assert not bc.uses_tools({"messages": [{"role": "assistant", "tool_calls": []}]})


def test_the_report_sums_and_takes_medians_per_conversation_and_per_template():
    times = {
        ("a", "01_plain"): {"ours": 1.0, "jinja2": 2.0},
        ("b", "01_plain"): {"ours": 3.0, "jinja2": 2.0},
        ("a", "07_tools"): {"ours": 4.0, "jinja2": 2.0},
        ("b", "07_tools"): {"ours": 1.0, "jinja2": 4.0},
    }
    assert bc.report(times, {"07_tools"}).splitlines() == [
        "| conversation | tools | templates | sums ours / Jinja2 | median over templates |",
        "|---|:---:|---:|---:|---:|",
        "| 01_plain |  | 2 | 1.00 | 1.00 |",
        "| 07_tools | yes | 2 | 0.83 | 1.12 |",
        "",
        "| per template, ours / Jinja2 | templates | median | worst | above 1.00 |",
        "|---|---:|---:|---:|---:|",
        "| all conversations | 2 | 0.96 | 1.25 | 1 |",
        "| conversations without tools | 2 | 1.00 | 1.50 | 1 |",
        "| conversations with tools | 2 | 1.12 | 2.00 | 1 |",
    ]


def test_the_experiment_replaces_the_quick_measure_and_leaves_the_text(monkeypatch):
    import minijinja_py as mj
    from minijinja_py.sandbox import measure

    monkeypatch.setattr(measure, "_measure_small", measure._measure_small)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"a": [1, "x"]}}}]
    template = mj.chat_environment().from_string("{{ tools|tojson }}")
    before = template.render(tools=tools)
    bc.without_measure()
    assert measure._measure_small(tools, 4095, 100, 100) == (2, 10, 1)
    assert template.render(tools=tools) == before
