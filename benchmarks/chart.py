"""Draw the benchmark results as SVG charts for the documentation, from benchmarks/results.md.

``python -m benchmarks.chart`` reads the tables that ``python -m benchmarks --write`` stored and
writes two charts, with no plotting library:

- ``docs/assets/speed.svg``: for each measure, minijinja_py and minijinja (Rust) as multiples of
  Jinja2's figure, on a log scale centred on Jinja2 (left of the line is faster or smaller);
- ``docs/assets/warm-per-template.svg``: the warm-render ratio to Jinja2 of every timed corpus
  template, sorted, so that the templates where we are slower than Jinja2 are visible.

Both files are generated: edit this module or rerun the benchmarks, never the SVG. A test checks
that the committed charts are what this module draws from the committed results.
"""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.md"
ASSETS = HERE.parent / "docs" / "assets"

OURS_COLOUR = "#3f51b5"
RUST_COLOUR = "#ef6c00"
INK = "#263238"
GRID = "#cfd8dc"

# Summary rows drawn, by the start of their label in results.md, with the name the chart shows.
MEASURES = [
    ("Cold:", "Cold: compile + first render"),
    ("Warm:", "Warm: render compiled template"),
    ("Memory", "Memory of a compiled template"),
    ("Import", "Import in a fresh interpreter"),
    ("One-time cost", "First template (parser load)"),
    ("Whole process", "Whole process, one chat"),
]

_UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "B": 1, "KiB": 1024, "MiB": 1024**2}


@dataclass(frozen=True)
class Measure:
    """One summary row: the figures as printed and the ratios to Jinja2 (None when absent)."""

    label: str
    ours: str
    jinja2: str
    rust: str | None
    ours_ratio: float
    rust_ratio: float | None


def quantity(text: str) -> float | None:
    """``"792 ms"`` -> 0.792, ``"16 KiB"`` -> 16384; None for anything else (``"–"``, ``"n/a"``)."""
    match = re.match(r"\s*([0-9.]+)\s*(ns|µs|us|ms|s|B|KiB|MiB)\b", text)
    return float(match[1]) * _UNITS[match[2]] if match else None


def _number(text: str) -> float | None:
    match = re.match(r"\s*([0-9]+(?:\.[0-9]+)?)\s*$", text)
    return float(match[1]) if match else None


def _rows(markdown: str, header_start: str) -> list[list[str]]:
    """The body rows of the first Markdown table whose header row starts with ``header_start``."""
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(header_start):
            rows = []
            for body in lines[i + 2 :]:
                if not body.startswith("|"):
                    break
                rows.append([cell.strip() for cell in body.strip().strip("|").split("|")])
            return rows
    raise ValueError(f"no table starting with {header_start!r} in the results")


def summary(markdown: str) -> list[Measure]:
    """The measures of the summary table, in the chart's order."""
    rows = _rows(markdown, "| Measure |")
    measures = []
    for start, label in MEASURES:
        row = next((r for r in rows if r[0].startswith(start)), None)
        if row is None:
            continue
        ours, jinja2, ratio, rust, rust_ratio = row[1], row[2], row[3], row[7], row[8]
        ours_ratio = _number(ratio.split()[0]) if ratio else None
        if ours_ratio is None:
            continue
        rust_value = quantity(rust)
        reference = quantity(jinja2)
        rust_r = _number(rust_ratio)
        if not rust_r and rust_value is not None and reference:
            # Not printed (or printed as 0.00): the two figures cover the same templates.
            rust_r = round(rust_value / reference, 3)
        measures.append(
            Measure(
                label=label,
                ours=ours,
                jinja2=jinja2,
                rust=rust.split(" (")[0] if rust_value is not None else None,
                ours_ratio=ours_ratio,
                rust_ratio=rust_r if rust_value is not None else None,
            )
        )
    return measures


def warm_ratios(markdown: str) -> list[tuple[str, float, float | None]]:
    """Per template: (name, ours / Jinja2 warm, minijinja / Jinja2 warm or None)."""
    out = []
    for row in _rows(markdown, "| Template | Pairs |"):
        name, ours, jinja2, rust = row[0], quantity(row[5]), quantity(row[6]), quantity(row[12])
        if ours is None or not jinja2:
            continue
        out.append((name, ours / jinja2, rust / jinja2 if rust is not None else None))
    return sorted(out, key=lambda item: item[1])


def _machine(markdown: str) -> str:
    match = re.search(r"^Machine: (.*?)\s*$", markdown, re.M)
    return match[1].rstrip(". ") if match else ""


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _ratio_text(ratio: float) -> str:
    return f"{ratio:.2f}×" if ratio >= 0.1 else f"{ratio:.3f}×"


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Roboto, Helvetica, Arial, sans-serif" '
        f'font-size="12" role="img" aria-label="{_escape(title)}">'
    )
    background = f'<rect width="{width}" height="{height}" fill="#ffffff"/>'
    return "\n".join([head, f"<title>{_escape(title)}</title>", background, *body, "</svg>", ""])


def speed_chart(measures: list[Measure], machine: str) -> str:
    """Each measure as two bars from Jinja2's line: ours and minijinja (Rust), log scale."""
    label_w, plot_w, right_w = 220, 420, 190
    width = label_w + plot_w + right_w
    lo, hi = -2.5, 1.0  # log10 of the ratios shown: 0.003x .. 10x
    top, group_h, bar_h = 84, 46, 15
    height = top + group_h * len(measures) + 58

    def x(ratio: float) -> float:
        value = min(max(math.log10(ratio), lo), hi)
        return label_w + (value - lo) / (hi - lo) * plot_w

    title = "minijinja_py and minijinja (Rust) as multiples of Jinja2 (lower is better)"
    body = [
        f'<text x="12" y="22" font-size="15" font-weight="bold" fill="{INK}">{_escape(title)}</text>',
        f'<text x="12" y="40" fill="{INK}">Log scale. The line at 1× is Jinja2 3.1.6 configured '
        "as transformers configures it; left of it is faster or smaller.</text>",
        f'<text x="12" y="56" fill="#546e7a">{_escape(machine)}</text>',
    ]
    axis_bottom = top + group_h * len(measures)
    for tick in (0.01, 0.03, 0.1, 0.3, 1, 3, 10):
        tx = x(tick)
        colour, dash = (INK, "") if tick == 1 else (GRID, ' stroke-dasharray="3 3"')
        body.append(
            f'<line x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{axis_bottom}" '
            f'stroke="{colour}"{dash}/>'
        )
        body.append(
            f'<text x="{tx:.1f}" y="{axis_bottom + 16}" text-anchor="middle" fill="{INK}">'
            f"{tick:g}×</text>"
        )
    body.append(
        f'<text x="{x(1):.1f}" y="{top - 10}" text-anchor="middle" fill="{INK}">Jinja2</text>'
    )
    one = x(1)
    for i, m in enumerate(measures):
        y = top + i * group_h + 6
        body.append(
            f'<text x="{label_w - 10}" y="{y + bar_h + 4}" text-anchor="end" fill="{INK}">'
            f"{_escape(m.label)}</text>"
        )
        bars = [(m.ours_ratio, OURS_COLOUR, f"{_ratio_text(m.ours_ratio)} ({m.ours} vs {m.jinja2})")]
        if m.rust_ratio is not None and m.rust is not None:
            bars.append((m.rust_ratio, RUST_COLOUR, f"{_ratio_text(m.rust_ratio)} ({m.rust})"))
        else:
            bars.append((None, RUST_COLOUR, "minijinja: not measured"))
        for j, (ratio, colour, text) in enumerate(bars):
            by = y + j * (bar_h + 2)
            if ratio is None:
                body.append(
                    f'<text x="{one + 6:.1f}" y="{by + bar_h - 3}" font-style="italic" '
                    f'fill="#78909c">{_escape(text)}</text>'
                )
                continue
            end = x(ratio)
            left, span = min(one, end), abs(end - one)
            body.append(
                f'<rect x="{left:.1f}" y="{by}" width="{max(span, 1):.1f}" height="{bar_h}" '
                f'fill="{colour}"/>'
            )
            body.append(
                f'<text x="{max(one, end) + 6:.1f}" y="{by + bar_h - 3}" fill="{INK}">'
                f"{_escape(text)}</text>"
            )
    legend_y = axis_bottom + 36
    for k, (name, colour) in enumerate(
        [("minijinja_py (pure Python)", OURS_COLOUR), ("minijinja (Rust binding)", RUST_COLOUR)]
    ):
        lx = label_w + k * 220
        body.append(f'<rect x="{lx}" y="{legend_y - 10}" width="12" height="12" fill="{colour}"/>')
        body.append(f'<text x="{lx + 18}" y="{legend_y}" fill="{INK}">{name}</text>')
    return _svg(width, height, body, title)


def warm_chart(ratios: list[tuple[str, float, float | None]], machine: str) -> str:
    """One bar per template: its warm ours / Jinja2 ratio, sorted; minijinja's as dots."""
    left, plot_w, plot_h, top = 60, 720, 260, 76
    width, height = left + plot_w + 30, top + plot_h + 70
    lo, hi = -1.0, 0.5  # log10: 0.1x .. 3.16x
    step = plot_w / max(len(ratios), 1)

    def y(ratio: float) -> float:
        value = min(max(math.log10(ratio), lo), hi)
        return top + (hi - value) / (hi - lo) * plot_h

    slower = sum(1 for _, ours, _ in ratios if ours > 1)
    title = "Warm rendering per corpus template: ours / Jinja2, sorted (lower is faster)"
    body = [
        f'<text x="12" y="22" font-size="15" font-weight="bold" fill="{INK}">{_escape(title)}</text>',
        f'<text x="12" y="40" fill="{INK}">{len(ratios)} templates; {slower} render slower than '
        "Jinja2 (bars above the line at 1×). Dots: minijinja (Rust) / Jinja2. Log scale.</text>",
        f'<text x="12" y="56" fill="#546e7a">{_escape(machine)}</text>',
    ]
    for tick in (0.1, 0.2, 0.5, 1, 2, 3):
        ty = y(tick)
        colour, dash = (INK, "") if tick == 1 else (GRID, ' stroke-dasharray="3 3"')
        body.append(
            f'<line x1="{left}" y1="{ty:.1f}" x2="{left + plot_w}" y2="{ty:.1f}" '
            f'stroke="{colour}"{dash}/>'
        )
        body.append(
            f'<text x="{left - 6}" y="{ty + 4:.1f}" text-anchor="end" fill="{INK}">{tick:g}×</text>'
        )
    one = y(1)
    for i, (name, ours, rust) in enumerate(ratios):
        bx = left + i * step
        end = y(ours)
        body.append(
            f'<rect x="{bx + 0.5:.1f}" y="{min(one, end):.1f}" width="{max(step - 1, 1):.1f}" '
            f'height="{max(abs(end - one), 0.5):.1f}" fill="{OURS_COLOUR}">'
            f"<title>{_escape(name)}: {ours:.2f}×</title></rect>"
        )
        if rust is not None:
            body.append(
                f'<circle cx="{bx + step / 2:.1f}" cy="{y(rust):.1f}" r="1.8" fill="{RUST_COLOUR}">'
                f"<title>{_escape(name)}: minijinja {rust:.2f}×</title></circle>"
            )
    body.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 22}" text-anchor="middle" '
        f'fill="{INK}">corpus templates, sorted by our ratio (hover a bar for its name)</text>'
    )
    legend_y = top + plot_h + 50
    for k, (name, colour) in enumerate(
        [("minijinja_py / Jinja2", OURS_COLOUR), ("minijinja (Rust) / Jinja2", RUST_COLOUR)]
    ):
        lx = left + k * 220
        body.append(f'<rect x="{lx}" y="{legend_y - 10}" width="12" height="12" fill="{colour}"/>')
        body.append(f'<text x="{lx + 18}" y="{legend_y}" fill="{INK}">{name}</text>')
    return _svg(width, height, body, title)


def charts(markdown: str) -> dict[str, str]:
    """The SVG text of each chart, by file name."""
    machine = _machine(markdown)
    return {
        "speed.svg": speed_chart(summary(markdown), machine),
        "warm-per-template.svg": warm_chart(warm_ratios(markdown), machine),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.chart", description=__doc__)
    parser.add_argument("--results", type=Path, default=RESULTS, help="a results.md to read")
    parser.add_argument("--out", type=Path, default=ASSETS, help="the folder to write into")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, svg in charts(args.results.read_text(encoding="utf-8")).items():
        (args.out / name).write_text(svg, encoding="utf-8")
        print(args.out / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
