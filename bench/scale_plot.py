"""The scale benchmark's plot as a plain SVG (no plotting library needed): four panels over corpus size
(log scale): warm query latency, peak resident memory, time to the first answered query, build time."""
from __future__ import annotations

import math
from html import escape
from pathlib import Path

PANEL_W, PANEL_H = 360, 240
LEFT, RIGHT, TOP, BOTTOM = 62, 16, 34, 42
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")
GOAL = "#888888"


def _nice_top(value: float) -> float:
    """A round axis maximum at or above value."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def _size_label(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:g}M"
    return f"{n / 1000:g}k"


def _panel(x0: float, y0: float, title: str, unit: str, sizes: list[int],
           series: list[tuple[str, list[float | None]]], goal: float | None, goal_label: str) -> list[str]:
    """SVG elements of one panel at (x0, y0): lines with points, an optional dashed goal line."""
    width, height = PANEL_W - LEFT - RIGHT, PANEL_H - TOP - BOTTOM
    values = [v for _, ys in series for v in ys if v is not None] + ([goal] if goal else [])
    top = _nice_top(max(values) * 1.08 if values else 1.0)
    low, high = math.log10(min(sizes)), math.log10(max(sizes))
    span = (high - low) or 1.0
    pad = 0.08 * width

    def x(n: int) -> float:
        return x0 + LEFT + pad + (math.log10(n) - low) / span * (width - 2 * pad) if high > low else \
            x0 + LEFT + width / 2

    def y(v: float) -> float:
        return y0 + TOP + height - v / top * height

    out = [f'<text x="{x0 + LEFT + width / 2}" y="{y0 + 18}" text-anchor="middle" font-weight="bold">'
           f'{escape(title)}</text>',
           f'<rect x="{x0 + LEFT}" y="{y0 + TOP}" width="{width}" height="{height}" fill="none" stroke="#333"/>']
    for i in range(6):
        value = top * i / 5
        out.append(f'<line x1="{x0 + LEFT - 4}" x2="{x0 + LEFT}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                   f'stroke="#333"/><text x="{x0 + LEFT - 7}" y="{y(value) + 4:.1f}" text-anchor="end">'
                   f'{value:g}</text>')
        if 0 < i < 5:
            out.append(f'<line x1="{x0 + LEFT}" x2="{x0 + LEFT + width}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                       f'stroke="#eee"/>')
    for n in sizes:
        out.append(f'<text x="{x(n):.1f}" y="{y0 + TOP + height + 16}" text-anchor="middle">{_size_label(n)}</text>')
    out.append(f'<text x="{x0 + LEFT + width / 2}" y="{y0 + PANEL_H - 6}" text-anchor="middle">papers '
               f'(log scale)</text>')
    out.append(f'<text transform="translate({x0 + 14},{y0 + TOP + height / 2}) rotate(-90)" '
               f'text-anchor="middle">{escape(unit)}</text>')
    if goal:
        out.append(f'<line x1="{x0 + LEFT}" x2="{x0 + LEFT + width}" y1="{y(goal):.1f}" y2="{y(goal):.1f}" '
                   f'stroke="{GOAL}" stroke-dasharray="5,4"/><text x="{x0 + LEFT + width - 4}" '
                   f'y="{y(goal) - 4:.1f}" text-anchor="end" fill="{GOAL}">{escape(goal_label)}</text>')
    for k, (name, ys) in enumerate(series):
        color = COLORS[k % len(COLORS)]
        points = [(x(n), y(v)) for n, v in zip(sizes, ys) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        out += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{color}"/>' for px, py in points]
        out.append(f'<text x="{x0 + LEFT + 8}" y="{y0 + TOP + 16 + 15 * k}" fill="{color}">{escape(name)}</text>')
    return out


def _get(record: dict, *path: str) -> float | None:
    for key in path:
        if not isinstance(record, dict) or key not in record:
            return None
        record = record[key]
    return record if isinstance(record, (int, float)) else None


def _scaled(value: float | None, factor: float) -> float | None:
    return None if value is None else round(value * factor, 2)


def write_plot(results: dict, path: Path) -> None:
    """Draw the sizes in `results["sizes"]` (bench/results/scale.json) into an SVG file."""
    records = sorted(results["sizes"].values(), key=lambda r: r["papers"])
    sizes = [r["papers"] for r in records]
    if not sizes:
        return
    gib, minute = 1 / 1024, 1 / 60
    panels = [
        ("Warm query latency, p95", "ms", [
            ("global, CPU time", [_get(r, "query", "latency", "global", "cpu_p95_ms") for r in records]),
            ("local, CPU time", [_get(r, "query", "latency", "local", "cpu_p95_ms") for r in records]),
            ("global, wall (shared machine)", [_get(r, "query", "latency", "global", "p95_ms") for r in records]),
            ("local, wall (shared machine)", [_get(r, "query", "latency", "local", "p95_ms") for r in records])],
         300, "goal 300 ms"),
        ("Peak resident memory", "GiB", [
            ("query process", [_scaled(_get(r, "query", "peak_rss_mib"), gib) for r in records]),
            ("query process, each page once (PSS)", [_scaled(_get(r, "query", "pss_mib"), gib) for r in records]),
            ("query process, own memory (no mapped files)",
             [_scaled(_get(r, "query", "rss_anon_mib"), gib) for r in records]),
            ("build process", [_scaled(_get(r, "build", "peak_rss_mib"), gib) for r in records]),
            ("build process, own memory (no mapped files)",
             [_scaled(_get(r, "build", "peak_anon_mib"), gib) for r in records])],
         6, "goal 6 GiB"),
        ("Process start to first answer", "s", [
            ("CPU time", [_get(r, "query", "cpu_first_query_s") for r in records]),
            ("of which index load (CPU)", [_get(r, "query", "cpu_index_load_s") for r in records]),
            ("wall (shared machine)", [_get(r, "query", "first_query_s") for r in records])], 3, "goal 3 s"),
        ("Index build (no embedding)", "minutes", [
            ("CPU time", [_scaled(_get(r, "build", "cpu_build_s"), minute) for r in records]),
            ("wall (shared machine)", [_scaled(_get(r, "build", "build_s"), minute) for r in records])], None, ""),
    ]
    elements = []
    for i, (title, unit, series, goal, label) in enumerate(panels):
        elements += _panel((i % 2) * PANEL_W, (i // 2) * PANEL_H, title, unit, sizes, series, goal, label)
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * PANEL_W}" height="{2 * PANEL_H}" '
           f'font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="white"/>'
           + "".join(elements) + "</svg>\n")
    path.write_text(svg, encoding="utf-8")
