"""The documentation's charts are drawn by benchmarks/chart.py from benchmarks/results.md."""

from pathlib import Path

import pytest

from benchmarks import chart

ROOT = Path(__file__).resolve().parents[1]

SUMMARY = """\
Machine: Test box, 2 cores.

| Measure | minijinja_py | Jinja2 | ours / Jinja2 | per template: median (worst) | Target | Met | minijinja (Rust) | minijinja / Jinja2 |
|---|---:|---:|---:|---:|---:|:---:|---:|---:|
| Cold: new env, sum over 2 templates | 200 ms | 1.00 s | 0.20 | 0.2 (worst 0.3) | ≤ 0.30 | yes | 10.0 ms (1 tpl) | 0.01 |
| Memory of a compiled template | 16 KiB | 32 KiB | 0.50 (sums) | 0.52 (worst 0.82) | ≤ 1.00 | yes | not visible | – |
| One-time cost of the first template | 4.0 ms | 2.0 ms | 2.00 | – | – | – | 100 µs | – |
"""


def test_quantities_are_read_with_their_units():
    figures = [chart.quantity(t) for t in ["792 ms", "3.48 s", "93.4 µs", "16 KiB"]]
    assert figures == pytest.approx([0.792, 3.48, 93.4e-6, 16 * 1024], rel=1e-12)
    assert chart.quantity("–") is None
    assert chart.quantity("n/a") is None


def test_the_summary_keeps_printed_ratios_and_computes_missing_ones():
    assert chart.summary(SUMMARY) == [
        chart.Measure("Cold: compile + first render", "200 ms", "1.00 s", "10.0 ms", 0.2, 0.01),
        chart.Measure("Memory of a compiled template", "16 KiB", "32 KiB", None, 0.5, None),
        chart.Measure("First template (parser load)", "4.0 ms", "2.0 ms", "100 µs", 2.0, 0.05),
    ]


def test_a_bar_per_measure_and_engine_with_its_figures():
    svg = chart.speed_chart(chart.summary(SUMMARY), "Test box")
    assert svg.count('fill="#3f51b5"/>') == 3 + 1  # three measures and the legend
    assert "0.20× (200 ms vs 1.00 s)" in svg
    assert "2.00× (4.0 ms vs 2.0 ms)" in svg
    assert "0.050× (100 µs)" in svg
    assert "minijinja: not measured" in svg


def test_the_committed_charts_are_drawn_from_the_committed_results():
    results = (ROOT / "benchmarks" / "results.md").read_text(encoding="utf-8")
    for name, svg in chart.charts(results).items():
        assert (ROOT / "docs" / "assets" / name).read_text(encoding="utf-8") == svg, (
            f"docs/assets/{name} is stale: run python -m benchmarks.chart"
        )
