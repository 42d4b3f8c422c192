#!/usr/bin/env python3
"""Draws the overload benchmark's chart (docs/overload.md) from a results file.

    python3 benchmarks/overload-chart.py benchmarks/results/<date>-overload.md docs/overload-benchmark.svg

Reads the per-load table overload-bench.sh writes (one row per variant and load: 1×, 2×,
4×) and draws three panels side by side, one bar per variant and load: goodput as a share
of the service's capacity, the share of critical requests admitted, and the p99 latency of
admitted critical requests. Plain SVG, no dependency beyond Python 3.
"""
import re
import sys

COLOURS = {"none": "#9e9e9e", "fixed": "#f28e2b", "spring": "#edc948", "netflix": "#4e79a7", "ours": "#59a14f"}
PANELS = [
    ("goodput ÷ capacity", "goodput", lambda v: v, 1.0, "{:.2f}"),
    ("critical requests admitted", "critical", lambda v: v, 1.0, "{:.0%}"),
    ("p99 of admitted critical (ms)", "p99", lambda v: v, None, "{:.0f}"),
]


def number(text):
    text = text.strip().rstrip("%")
    try:
        return float(text)
    except ValueError:
        return None


def rows(path):
    """The per-load rows: (variant, load) -> values."""
    found = {}
    header = None
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 10:
            continue
        if cells[0] == "variant" and "goodput ÷ capacity" in cells:
            header = cells
            continue
        if header is None or set(cells[0]) <= set("-: "):
            continue
        if not re.fullmatch(r"\d+(\.\d+)?×", cells[1]):
            # the recovery table's rows ("0.5× before", "4× overload") are not loads
            header = None if cells[1].endswith(("before", "after", "overload")) else header
            continue
        values = dict(zip(header, cells))
        critical = number(values["critical admitted"])
        found[(cells[0], cells[1])] = {
            "goodput": number(values["goodput ÷ capacity"]),
            "critical": None if critical is None else critical / 100,
            "p99": number(values["critical p99 ms"]),
        }
    return found


def svg(found, out):
    variants = [v for v in COLOURS if any(k[0] == v for k in found)]
    loads = sorted({k[1] for k in found}, key=lambda l: float(l.rstrip("×")))
    panel_w, panel_h, top, left = 330, 240, 50, 55
    width = left + len(PANELS) * (panel_w + 40) + 20
    height = top + panel_h + 80
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="DejaVu Sans, Arial, sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    for p, (title, key, _, fixed_max, fmt) in enumerate(PANELS):
        x0 = left + p * (panel_w + 40)
        values = [found[(v, l)][key] for v in variants for l in loads if (v, l) in found and found[(v, l)][key] is not None]
        top_value = fixed_max or max(values + [1]) * 1.1
        parts.append(f'<text x="{x0 + panel_w / 2}" y="{top - 20}" text-anchor="middle" font-size="14">{title}</text>')
        parts.append(f'<line x1="{x0}" y1="{top + panel_h}" x2="{x0 + panel_w}" y2="{top + panel_h}" stroke="#333"/>')
        for tick in range(5):
            value = top_value * tick / 4
            y = top + panel_h - panel_h * tick / 4
            parts.append(f'<line x1="{x0}" y1="{y}" x2="{x0 + panel_w}" y2="{y}" stroke="#e0e0e0"/>')
            parts.append(f'<text x="{x0 - 5}" y="{y + 4}" text-anchor="end" fill="#555">{fmt.format(value)}</text>')
        group = panel_w / len(loads)
        bar = (group - 16) / max(1, len(variants))
        for g, load in enumerate(loads):
            gx = x0 + g * group + 8
            parts.append(f'<text x="{gx + (group - 16) / 2}" y="{top + panel_h + 16}" text-anchor="middle">{load} capacity</text>')
            for i, variant in enumerate(variants):
                value = found.get((variant, load), {}).get(key)
                if value is None:
                    continue
                h = panel_h * min(value, top_value) / top_value
                parts.append(f'<rect x="{gx + i * bar:.1f}" y="{top + panel_h - h:.1f}" width="{bar - 2:.1f}" '
                             f'height="{h:.1f}" fill="{COLOURS[variant]}"><title>{variant} {load}: {fmt.format(value)}</title></rect>')
    for i, variant in enumerate(variants):
        x = left + i * 120
        parts.append(f'<rect x="{x}" y="{height - 28}" width="14" height="14" fill="{COLOURS[variant]}"/>')
        parts.append(f'<text x="{x + 20}" y="{height - 16}">{variant}</text>')
    parts.append("</svg>")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: overload-chart.py <results.md> <chart.svg>")
    svg(rows(sys.argv[1]), sys.argv[2])
