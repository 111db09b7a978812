"""benchmarks.report turns measured figures into one table of the targets (issue 42's, and issue
23's where issue 42 sets none)."""

import pytest

from benchmarks import report

PER_TEMPLATE = {
    "a": {"ours": 1.0, "jinja2": 2.0, "minijinja": 0.5},
    "b": {"ours": 3.0, "jinja2": 2.0, "minijinja": 1.0},
    "c": {"ours": 1.0, "jinja2": 4.0},  # the Rust binding cannot render this one
}


def test_ratio_stats_sum_each_side_and_summarise_the_per_template_ratios():
    assert report.ratio_stats(PER_TEMPLATE, "ours", "jinja2") == {
        "templates": 3,
        "sum": 5.0,
        "reference": 8.0,
        "ratio": 0.625,
        "median": 0.5,
        "worst": 1.5,
        "slower": 1,
        "ratios": [0.25, 0.5, 1.5],
    }
    rust = report.ratio_stats(PER_TEMPLATE, "minijinja", "jinja2")
    assert (rust["templates"], rust["ratio"], rust["median"]) == (2, 0.375, pytest.approx(0.375))
    assert report.ratio_stats({"a": {"ours": 1.0}}, "ours", "jinja2") is None


def test_engine_rows_judge_cold_by_the_sums_and_warm_by_the_median_beside_the_rust_binding():
    figures = {"cold": PER_TEMPLATE, "warm": PER_TEMPLATE, "pairs": 12}
    cold, warm, slower = report.engine_rows(figures, "pure", compiled=False)
    assert cold == report.Row(
        "Cold, pure: new env + compile + first render, sum over 3 templates",
        "5.00 s",
        "Jinja2 8.00 s",
        "0.62",
        "median 0.50, worst 1.50",
        "≤ 0.20 (sums)",
        "**no**",
        "0.38 (median 0.38, worst 0.50; 2 tpl)",
    )
    assert warm.figure == "Warm, pure: render a compiled template, sum over 12 pairs of 3 templates"
    assert (warm.detail, warm.target, warm.met) == (
        "median 0.50, worst 1.50; 1 of 3 slower than Jinja2",
        "median ≤ 0.70",
        "yes",
    )
    assert warm.rust == "0.38 (median 0.38, worst 0.50; 2 tpl); 0 slower than Jinja2"
    assert (slower.ours, slower.ratio, slower.met, slower.rust) == (
        "1 of 3",
        "worst 1.50",
        "**no**",
        "0 of 2",
    )


def test_the_compiled_build_has_its_own_targets_and_no_rust_column():
    figures = {"cold": PER_TEMPLATE, "warm": PER_TEMPLATE, "pairs": 12}
    rows = report.engine_rows(figures, "compiled", compiled=True)
    assert [(r.target, r.rust) for r in rows] == [
        ("≤ 0.12 (sums)", "– (see the pure rows)"),
        ("median ≤ 0.32", "– (see the pure rows)"),
        ("none (every template ≤ 0.60)", "– (see the pure rows)"),
    ]
    # (a 0.50 and a 1.50 of Jinja2's time: one template above the compiled build's 0.60)
    assert (rows[2].figure, rows[2].ours, rows[2].met) == (
        "Warm, compiled: templates above 0.60 of Jinja2",
        "1 of 3",
        "**no**",
    )


def test_a_per_template_row_gives_rates_and_the_judged_figure():
    medians = {"mine": {"t1": 1.0, "t2": 1.0}, "theirs": {"t1": 4.0, "t2": 1.0}}
    row = report.per_template_row(
        "mine / theirs", medians, "mine", "theirs", "theirs", 10, "training", "median", "–"
    )
    assert row == report.Row(
        "mine / theirs (2 templates, 10 pairs)",
        "5 conv/s",
        "theirs 2 conv/s",
        "0.40",
        "median 0.62, worst 1.00",
        "median ≤ 0.60",
        "**no**",
        "–",
    )


def test_the_batch_rows_are_rates_judged_per_row_and_fail_when_rows_differ():
    # 10,000 rows: the loop 2.0 s; batch 2.5 s whole, 225 µs a row without its start-up
    row = report.batch_per_row_row(loop_s=2.0, batch_slope=225e-6, count=10_000, equal=True)
    assert (row.ours, row.reference, row.ratio, row.target, row.met) == (
        "4,444 conv/CPU s",
        "loop 5,000 conv/CPU s",
        "0.89",
        "≥ 0.90",
        "**no**",
    )
    assert row.detail.endswith("per row (decode, render, encode, write; JSON lines by json)")
    msgspec = report.batch_per_row_row(2.0, 200e-6, 10_000, True, "msgspec (the fastjson extra)")
    assert msgspec.detail.endswith("; JSON lines by msgspec (the fastjson extra))")
    assert report.batch_per_row_row(2.0, 200e-6, 10_000, equal=False).met == "**no**"
    assert report.batch_per_row_row(2.0, 200e-6, 10_000, equal=True).met == "yes"
    whole = report.batch_row(loop_s=2.0, batch_s=2.5, count=10_000, equal=True)
    assert (whole.ours, whole.reference, whole.ratio, whole.target, whole.met) == (
        "4,000 conv/CPU s",
        "loop 5,000 conv/CPU s",
        "0.80",
        "–",
        "–",
    )


def test_the_model_row_predicts_16_workers_from_cpu_per_row():
    # one process 100 µs a row; with a pool the driver 5 µs, the workers 100 µs
    row = report.model_row(100e-6, 5e-6, 100e-6, "Test box (2 cores)")
    assert row.figure.startswith("Model, not a measurement: 16 workers / 1 worker")
    assert "Test box (2 cores)" in row.figure
    assert (row.ours, row.reference, row.ratio, row.met) == (
        "16 workers 152,381 rows/s",
        "1 worker 10,000 rows/s",
        "15.2×",
        "yes",
    )
    # a driver that cannot keep up caps the rate at 1 / driver
    assert report.model_row(100e-6, 20e-6, 100e-6, "x").ratio == "5.0×"


def test_the_table_keeps_cells_off_its_column_separator():
    text = report.table([report.not_measured("A | B", "pass --compiled-python")])
    assert text.splitlines()[0] == report.HEADER
    assert text.splitlines()[2] == (
        "| A / B | not measured: pass --compiled-python | – | – | – | – | – | – |"
    )


def test_the_compiled_build_child_refuses_to_measure_a_pure_package():
    # (the child of --compiled-python, for both of its figures: a pure package that shadowed the
    # compiled one would otherwise be measured and reported as the compiled build)
    import minijinja_py

    if minijinja_py.COMPILED:
        pytest.skip("the compiled build's own suite: the child would measure, not refuse")
    refusal = {"error": f"minijinja_py there is not compiled ({minijinja_py.__file__})"}
    assert report.child("quick", "engine") == refusal
    assert report.child("quick", "training") == refusal
