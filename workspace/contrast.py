"""WCAG 2 contrast between colours, and the text colour that reads best on a fill."""
from __future__ import annotations

import re

DARK_TEXT = "#000000"
LIGHT_TEXT = "#ffffff"
_RGB_RE = re.compile(r"rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)")


def rgb(colour: str) -> tuple[float, float, float]:
    """Red, green and blue (0-255) of "#rrggbb", "#rgb" or "rgb(r, g, b)" / "rgba(...)" (alpha ignored)."""
    text = colour.strip().lower()
    if text.startswith("#") and len(text) in (4, 7):
        digits = text[1:] if len(text) == 7 else "".join(c * 2 for c in text[1:])
        return tuple(int(digits[i:i + 2], 16) for i in (0, 2, 4))
    match = _RGB_RE.match(text)
    if not match:
        raise ValueError(f"not a colour this module reads: {colour!r}")
    return tuple(float(v) for v in match.groups())


def luminance(colour: str) -> float:
    """Relative luminance as WCAG 2 defines it (0 black, 1 white)."""
    def linear(value: float) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(v) for v in rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio, from 1 (same luminance) to 21 (black on white)."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_colour(fill: str) -> str:
    """Dark or white text, whichever contrasts more with `fill` (at least 4.5:1 for any fill)."""
    return DARK_TEXT if contrast(DARK_TEXT, fill) >= contrast(LIGHT_TEXT, fill) else LIGHT_TEXT
