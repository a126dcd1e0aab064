"""Text for st.markdown that shows literally (titles, abstracts, file names, messages)."""
from __future__ import annotations

import re

_MARKDOWN_SPECIAL_RE = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
_AUTOLINK_RE = re.compile(r"(?<=:)(?=//)|(?<=www)(?=\.)|(?=@)", re.IGNORECASE)  # where GFM starts a bare link
ZERO_WIDTH_SPACE = "\u200b"


def plain(text: object) -> str:
    """Text for st.markdown that shows literally: whitespace collapsed, all punctuation backslash-escaped,
    and bare URLs / e-mail addresses broken by a zero-width space so that they are not turned into links."""
    text = _AUTOLINK_RE.sub(ZERO_WIDTH_SPACE, " ".join(str(text).split()))
    return _MARKDOWN_SPECIAL_RE.sub(r"\\\1", text)
