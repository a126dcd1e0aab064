"""Where each paper of the citation graph sits: years run left to right on a true scale, no label covers another
label or paper, and rows and label sides are chosen so that citation links cross few labels and papers.

Every year from the oldest to the newest gets a band of the same width; a run of `BREAK_YEARS` or more years
without papers is cut out and drawn as a narrow, marked break (so is the step from "no year" to the first
year). Coordinates are in pixels of a plot assumed `width` pixels wide, with `row_height` pixels per row; the
figure is drawn at least that tall, so the estimates hold as long as the browser gives the plot about that
width (a wider or taller plot only spreads things further apart).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

PLOT_WIDTH = 900
SPACING = 4  # pixels at least between one paper's label and the next paper
CHAR_WIDTH = 0.6  # average glyph width of the label font, in ems (a generous estimate)
PAD = 8  # pixels kept free at either end of the year axis
BREAK_YEARS = 3  # a run of this many empty years or more is cut out of the scale
BREAK_WIDTH = 26  # pixels a cut takes
MIN_BAND = 4  # narrowest a year may get, in pixels
TICK_STEPS = (1, 2, 5, 10, 20, 50, 100)
RIGHT, LEFT = 1, -1  # the side of its paper a label is written on
ROW_COST = 0.25  # a row further from a paper's neighbours costs this share of a crossing
TRIES = 8  # free places weighed per paper


@dataclass(frozen=True)
class Item:
    """One paper to place: its year (None: unknown), marker diameter, label size and gap, all in pixels."""

    node: object
    year: int | None
    size: float
    label_width: float
    label_height: float
    gap: float  # between the marker's edge and its label: room for an arrowhead
    neighbours: tuple = ()

    @property
    def reach(self) -> float:
        """How far the label's far end lies from the node's centre."""
        return self.size / 2 + self.gap + self.label_width

    def span(self, x: float, side: int) -> tuple[float, float]:
        """The stretch of its row the node and its label take, with the label on `side`."""
        return (x - self.size / 2, x + self.reach) if side == RIGHT else (x - self.reach, x + self.size / 2)

    def label_box(self, x: float, y: float, side: int) -> tuple[float, float, float, float]:
        """The label's box (left, top, right, bottom) for a node centred at (x, y) pixels."""
        near, far = x + side * (self.size / 2 + self.gap), x + side * self.reach
        return min(near, far), y - self.label_height / 2, max(near, far), y + self.label_height / 2


@dataclass(frozen=True)
class Scale:
    """Years to pixels: each year's band starts at `starts[year]` (None: the papers without a year) and is
    `band` pixels wide; `breaks` are the cuts, as (centre, first and last year left out; None for the cut after
    "no year")."""

    starts: dict
    band: float
    breaks: list


@dataclass
class Placement:
    """Node centres (x in pixels, y in rows), each label's side, the scale and the axis ranges."""

    x: dict
    y: dict
    side: dict
    scale: Scale
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    rows: int


def label_width(text: str, font_size: float) -> float:
    return len(text) * font_size * CHAR_WIDTH


def runs_of_years(years: list[int]) -> list[range]:
    """The stretches drawn to scale: consecutive years, and gaps shorter than `BREAK_YEARS`, stay together."""
    runs = [[years[0], years[0]]] if years else []
    for year in years[1:]:
        if year - runs[-1][1] - 1 >= BREAK_YEARS:
            runs.append([year, year])
        else:
            runs[-1][1] = year
    return [range(first, last + 1) for first, last in runs]


def year_scale(years: set, width: float, left_room: float, right_room: float) -> Scale:
    """Equal bands for every year of each run, and a cut between runs, within `width` less the room kept free
    at either end for labels that reach past the oldest and the newest band."""
    runs = ([range(0)] if None in years else []) + runs_of_years(sorted(y for y in years if y is not None))
    bands = sum(len(run) for run in runs) + (None in years)
    room = width - 2 * PAD - left_room - right_room - BREAK_WIDTH * (len(runs) - 1)
    band = max(room / bands, MIN_BAND)
    starts, breaks = {}, []
    cursor = PAD + left_room
    for number, run in enumerate(runs):
        if number:
            before = runs[number - 1]
            breaks.append((cursor + BREAK_WIDTH / 2, before[-1] + 1 if before else None, run[0] - 1))
            cursor += BREAK_WIDTH
        for year in run or [None]:
            starts[year] = cursor
            cursor += band
    return Scale(starts=starts, band=band, breaks=breaks)


def through(segments: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """How far each segment (rows of x0, y0, x1, y1) runs inside each box (rows of left, top, right, bottom), as
    a segments × boxes array, 0 where it misses: Liang-Barsky clipping of the pairs whose bounding boxes meet."""
    found = np.zeros((len(segments), len(boxes)))
    near = ((np.minimum(segments[:, 0], segments[:, 2])[:, None] <= boxes[:, 2])
            & (np.maximum(segments[:, 0], segments[:, 2])[:, None] >= boxes[:, 0])
            & (np.minimum(segments[:, 1], segments[:, 3])[:, None] <= boxes[:, 3])
            & (np.maximum(segments[:, 1], segments[:, 3])[:, None] >= boxes[:, 1]))
    s, b = np.nonzero(near)
    if not len(s):
        return found
    x0, y0 = segments[s, 0], segments[s, 1]
    dx, dy = segments[s, 2] - x0, segments[s, 3] - y0
    low, high = np.zeros(len(s)), np.ones(len(s))
    for p, q in ((-dx, x0 - boxes[b, 0]), (dx, boxes[b, 2] - x0), (-dy, y0 - boxes[b, 1]), (dy, boxes[b, 3] - y0)):
        t = q / np.where(p != 0, p, 1)
        low = np.where(p < 0, np.maximum(low, t), low)
        high = np.where(p > 0, np.minimum(high, t), high)
    found[s, b] = np.maximum(high - low, 0) * np.hypot(dx, dy)  # parallel to a side: within it, as the boxes meet
    return found


def crossings(box: tuple[float, float, float, float], segments: np.ndarray) -> int:
    """How many segments pass through the box."""
    return int(np.count_nonzero(through(segments, np.array([box], dtype=float))))


def weight(segments: np.ndarray, boxes: np.ndarray, skip: np.ndarray | bool = False) -> float:
    """What links crossing boxes cost: the length each runs inside a box, in units of the box's height (a link
    along a label costs more than one that cuts across it); `skip` leaves pairs out."""
    lengths = np.where(skip, 0, through(segments, boxes))
    return float((lengths / (boxes[:, 3] - boxes[:, 1])).sum())


class Drawn:
    """What is placed so far, in pixels: label and marker boxes, the node each marker belongs to, and links."""

    def __init__(self):
        self.boxes, self.owners, self.links = np.zeros((0, 4)), np.zeros(0, dtype=int), np.zeros((0, 4))
        self.number: dict = {}  # each placed node's number, as in `owners` (-1: a label, which every link avoids)

    def cost(self, item: Item, x: float, y: float, side: int, ends: list[tuple[object, float, float]]) -> float:
        """The `weight` of the crossings a candidate adds: its links to the placed `ends` (node, x, y) through the
        boxes drawn (bar their own ends' markers) and through its own label, and the links drawn through its
        label and marker."""
        own = np.array([item.label_box(x, y, side), marker_box(item, x, y)])
        total = weight(self.links, own)
        if ends:
            new = np.array([(x, y, ex, ey) for _, ex, ey in ends])
            owners = np.append(self.owners, -1)
            at_end = owners[None, :] == np.array([self.number[node] for node, _, _ in ends])[:, None]
            total += weight(new, np.vstack([self.boxes, own[:1]]), at_end)
        return total

    def add(self, item: Item, x: float, y: float, side: int, ends: list[tuple[object, float, float]]) -> None:
        self.number[item.node] = len(self.number)
        self.boxes = np.vstack([self.boxes, [item.label_box(x, y, side), marker_box(item, x, y)]])
        self.owners = np.append(self.owners, [-1, self.number[item.node]])
        self.links = np.vstack([self.links, np.array([(x, y, ex, ey) for _, ex, ey in ends]).reshape(-1, 4)])


def marker_box(item: Item, x: float, y: float) -> tuple[float, float, float, float]:
    return x - item.size / 2, y - item.size / 2, x + item.size / 2, y + item.size / 2


def place(items: list[Item], width: float = PLOT_WIDTH, row_height: float = 32) -> Placement:
    """Give each item a row and a side for its label, in the order given (most important first).

    An item goes to its year's band, in a row where neither it nor its label overlaps a node or label already
    there: of the rows near the mean row of its neighbours placed before it (the top row when none is), the
    one where its links to them and its label cross labels, papers and links least (`Drawn.cost`), each row
    further away counting `ROW_COST`. Its label goes first to the side with fewer of its neighbours (links to
    newer papers run right, to older ones left); once all are placed, a label moves to the other side where
    that is free and crossed less.
    """
    if not items:
        return Placement({}, {}, {}, Scale({}, 0, []), (0.0, width), (-0.6, 0.6), 1)
    year_of = {item.node: item.year for item in items}
    order = {year: n for n, year in enumerate(sorted(set(year_of.values()), key=lambda y: (y is not None, y or 0)))}
    prefer = {item.node: preferred_side(item, year_of, order) for item in items}
    oldest, newest = min(order, key=order.get), max(order, key=order.get)
    left_room = max([i.reach for i in items if i.year == oldest and prefer[i.node] == LEFT], default=0.0)
    right_room = max([i.reach for i in items if i.year == newest and prefer[i.node] == RIGHT], default=0.0)
    scale = year_scale(set(order), width, left_room, right_room)
    taken: dict[int, list[tuple[float, float]]] = {}
    drawn = Drawn()
    x, y, side = {}, {}, {}
    for item in items:
        slots = max(1, int(scale.band // (item.size + item.reach + SPACING)))  # a wide band: papers side by side
        xs = [scale.starts[item.year] + (slot + 0.5) * scale.band / slots for slot in range(slots)]
        placed = [n for n in item.neighbours if n in y]
        wanted = round(sum(y[n] for n in placed) / len(placed)) if placed else 0
        ends = [(n, x[n], y[n] * row_height) for n in placed]
        centre, row, way = best_slot(item, xs, wanted, prefer[item.node], taken, width,
                                     lambda c, r, s: drawn.cost(item, c, r * row_height, s, ends))
        x[item.node], y[item.node], side[item.node] = centre, row, way
        taken.setdefault(row, []).append(item.span(centre, way))
        drawn.add(item, centre, row * row_height, way, ends)
    flip_labels(items, x, y, side, taken, width, row_height)
    rows = sorted(set(y.values()))
    right = max([max(i.span(x[i.node], side[i.node])[1] for i in items) + SPACING, width])
    return Placement(x=x, y=y, side=side, scale=scale, x_range=(0.0, right), y_range=(rows[0] - 0.6, rows[-1] + 0.6),
                     rows=rows[-1] - rows[0] + 1)


def preferred_side(item: Item, year_of: dict, order: dict) -> int:
    """The side with fewer of the item's neighbours: right unless more of them are newer than older."""
    mine = order[item.year]
    newer = sum(order[year_of[n]] > mine for n in item.neighbours if n in year_of)
    older = sum(order[year_of[n]] < mine for n in item.neighbours if n in year_of)
    return LEFT if newer > older else RIGHT


def fits(span: tuple[float, float], spans: list, width: float) -> bool:
    return span[0] >= 0 and span[1] <= width and all(span[1] + SPACING <= a or b + SPACING <= span[0]
                                                     for a, b in spans)


def best_slot(item: Item, xs: list[float], wanted: int, prefer: int, taken: dict, width: float,
              cost) -> tuple[float, int, int]:
    """The free (x, row, side) of least `cost(x, row, side)` plus `ROW_COST` per row away from `wanted` (rows
    count down from 0 at the top): the first `TRIES` free places, nearest first, and no further than a place
    could still do better, and no lower than the first row below all taken ones. Per row and side only the
    leftmost free x is tried. An empty row takes the item even where its label runs past the plot."""
    best, best_cost, tried, distance = None, math.inf, 0, 0
    last = max(taken, default=-1) + 1
    while distance * ROW_COST < best_cost and tried < TRIES:
        for row in [r for r in sorted({wanted - distance, wanted + distance}) if 0 <= r <= last]:
            spans = taken.get(row, [])
            for way in (prefer, -prefer):
                centre = next((c for c in xs if fits(item.span(c, way), spans, width)), None)
                if centre is not None and tried < TRIES:
                    tried += 1
                    total = cost(centre, row, way) + distance * ROW_COST
                    if total < best_cost:
                        best, best_cost = (centre, row, way), total
            if best is None and not spans:
                return xs[0], row, prefer
        distance += 1
    return best


def flip_labels(items: list[Item], x: dict, y: dict, side: dict, taken: dict, width: float,
                row_height: float) -> None:
    """Move each label to its other side where that side is free and crossed less (twice over)."""
    links = {frozenset((i.node, n)) for i in items for n in i.neighbours if n in x and n != i.node}
    segments = np.array([(x[a], y[a] * row_height, x[b], y[b] * row_height) for a, b in map(tuple, links)],
                        dtype=float).reshape(-1, 4)
    for _ in range(2):
        for item in items:
            node, now = item.node, side[item.node]
            spans = list(taken[y[node]])
            spans.remove(item.span(x[node], now))
            other = item.span(x[node], -now)
            if not fits(other, spans, width):
                continue
            before = weight(segments, np.array([item.label_box(x[node], y[node] * row_height, now)]))
            after = weight(segments, np.array([item.label_box(x[node], y[node] * row_height, -now)]))
            if after < before:
                side[node] = -now
                taken[y[node]] = spans + [other]


def year_ticks(scale: Scale, tick_px: float = 40) -> tuple[list[float], list[str]]:
    """Ticks at the centres of every 1, 2, 5, 10... years (the smallest step that keeps them `tick_px` apart),
    and at a run's first year when no year of the run is a multiple of the step; "no year" too."""
    step = next((s for s in TICK_STEPS if s * scale.band >= tick_px), TICK_STEPS[-1])
    years = [year for year in scale.starts if year is not None]
    candidates = [None] if None in scale.starts else []
    if years:
        for run in runs_of_years(years):
            multiples = [year for year in run if year % step == 0]
            candidates += multiples or [run[0]]
    positions, texts = [], []
    for year in candidates:
        centre = scale.starts[year] + scale.band / 2
        if not positions or centre - positions[-1] >= tick_px:
            positions.append(centre)
            texts.append("no year" if year is None else str(year))
    return positions, texts
