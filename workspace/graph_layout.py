"""Where each paper of the citation graph sits: years run left to right, and no label covers another paper.

Years get columns in order (not to scale: a year's column is as wide as its papers need). Coordinates are
in pixels of a plot assumed `PLOT_WIDTH` wide, with `ROW_HEIGHT` pixels per row; the figure is drawn that
tall, so the estimates hold as long as the browser gives the plot about that width (a wider plot only
spreads things further apart).
"""
from __future__ import annotations

from dataclasses import dataclass

PLOT_WIDTH = 900
ROW_HEIGHT = 32
LEFT_PAD = 16
LABEL_GAP = 11  # pixels between a node's edge and its label: room for an arrowhead arriving from the right
SPACING = 4  # pixels at least between one paper's label and the next paper
CHAR_WIDTH = 0.6  # average glyph width of the label font, in ems (a generous estimate)
MIN_COLUMN = 14  # narrowest a year's column may get, in pixels


@dataclass(frozen=True)
class Item:
    """One paper to place: its year (None: unknown), marker diameter and label width in pixels."""

    node: object
    year: int | None
    size: float
    label_width: float
    neighbours: tuple = ()

    @property
    def footprint(self) -> float:
        """Width the node and its label take, from the node's left edge."""
        return self.size + LABEL_GAP + self.label_width


@dataclass
class Placement:
    """Node centres, the year columns and the axis ranges that keep the pixel estimates true."""

    x: dict
    y: dict
    years: list  # the year of each column, oldest first; None (no year) comes first
    tick_positions: list[float]  # where each column's year is written
    column_starts: list[float]  # where each year's column begins
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    rows: int


def label_width(text: str, font_size: float) -> float:
    return len(text) * font_size * CHAR_WIDTH


def column_widths(items: list[Item], years: list, width: float) -> list[float]:
    """Pixels per year, shared in proportion to the room its papers and labels need.

    No column is narrower than `MIN_COLUMN`, and the newest is at least as wide as its widest paper with
    its label, so that nothing runs past the right edge.
    """
    need = {year: 0.0 for year in years}
    for item in items:
        need[item.year] += item.footprint + SPACING
    least = [MIN_COLUMN] * len(years)
    least[-1] = max(item.footprint + SPACING for item in items if item.year == years[-1])
    widths: dict[int, float] = {}
    room = width - LEFT_PAD
    while True:  # give the columns that would fall below their minimum just that, then share the rest
        open_ = [n for n in range(len(years)) if n not in widths]
        total = sum(need[years[n]] for n in open_)
        short = [n for n in open_ if room * need[years[n]] / total < least[n]]
        if not short:
            widths.update({n: room * need[years[n]] / total for n in open_})
            return [widths[n] for n in range(len(years))]
        for n in short:
            widths[n] = least[n]
            room -= least[n]


def place(items: list[Item], width: float = PLOT_WIDTH) -> Placement:
    """Give each item a column by year and a row, in the order given (most important first).

    An item goes to the row nearest to the mean row of its neighbours placed before it (the top row when
    none is), in the first slot of its year's column where neither it nor its label overlaps a node
    or label already there. Wide columns (years with many papers) hold several slots side by side.
    """
    years = sorted({item.year for item in items}, key=lambda y: (y is not None, y or 0))
    widths = column_widths(items, years, width) if items else []
    starts = [LEFT_PAD + sum(widths[:n]) for n in range(len(years))]
    column_of = {year: number for number, year in enumerate(years)}
    offset = max((item.size for item in items), default=0) / 2  # node centres line up within a column
    taken: dict[int, list[tuple[float, float]]] = {}
    x, y = {}, {}
    for item in items:
        column = column_of[item.year]
        slots = max(1, int(widths[column] // (item.footprint + SPACING)))
        xs = [starts[column] + slot * widths[column] / slots + offset for slot in range(slots)]
        placed = [y[n] for n in item.neighbours if n in y]
        wanted = round(sum(placed) / len(placed)) if placed else 0
        x[item.node], y[item.node] = free_slot(item, xs, wanted, taken)
    rows = sorted(set(y.values())) or [0]
    typical = sorted(item.footprint for item in items)[len(items) // 2] if items else 0
    ticks = [start + (w / 2 if w >= 2 * typical else offset) for start, w in zip(starts, widths)]
    right = max([x[i.node] + i.size / 2 + LABEL_GAP + i.label_width for i in items] + [width])
    return Placement(x=x, y=y, years=years, tick_positions=ticks, column_starts=starts,
                     x_range=(0.0, right + SPACING), y_range=(rows[0] - 0.6, rows[-1] + 0.6),
                     rows=rows[-1] - rows[0] + 1)


def free_slot(item: Item, xs: list[float], wanted: int, taken: dict) -> tuple[float, int]:
    """The free (x, row) nearest to row `wanted` (rows count down from 0 at the top), searching outwards;
    it is marked as taken."""
    distance = 0
    while True:  # ends: a row below every taken one is free
        for row in [r for r in sorted({wanted - distance, wanted + distance}) if r >= 0]:
            for centre in xs:
                span = (centre - item.size / 2, centre + item.size / 2 + LABEL_GAP + item.label_width)
                if all(span[1] + SPACING <= a or b + SPACING <= span[0] for a, b in taken.get(row, [])):
                    taken.setdefault(row, []).append(span)
                    return centre, row
        distance += 1


def year_ticks(placement: Placement, tick_px: float = 40) -> tuple[list[float], list[str]]:
    """Tick positions and texts, left to right, skipping a year whose text would touch the last one written."""
    keep: list[int] = []
    for number, position in enumerate(placement.tick_positions):
        if not keep or position - placement.tick_positions[keep[-1]] >= tick_px:
            keep.append(number)
    return ([placement.tick_positions[n] for n in keep],
            ["no year" if placement.years[n] is None else str(placement.years[n]) for n in keep])
