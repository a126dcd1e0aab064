"""Messages for web visitors without the server's paths: an error or a log names no folder of the server."""
from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

from workspace import PROJECT_ROOT, corpora

_PATH_RE = re.compile(r"(?<![\w:/])(?:file://)?(?:/[^\s/:;,'\"()]+){2,}/?")  # an absolute path on the server


def _server_roots() -> list[str]:
    """The server's folders that paths in messages start with (the project, the corpora, home, temporary files,
    Python), each also as resolved: the longest first, so that one with spaces or odd characters is cut whole."""
    folders = [corpora.corpora_root(), PROJECT_ROOT, Path.home(), Path(tempfile.gettempdir()), Path(sys.prefix),
               Path(sys.base_prefix), Path.cwd()]
    if os.environ.get("CITREC_INDEX"):
        folders.append(Path(os.environ["CITREC_INDEX"]))
    names = {str(f) for f in folders} | {str(f.resolve()) for f in folders}
    return sorted((n for n in names if len(n.strip("/")) > 1), key=len, reverse=True)


def without_paths(text: str) -> str:
    """The text with each absolute server path cut to its last part ("…/corpus.jsonl.gz"); the server's known
    folders are cut even where they hold spaces, and alone they become "/…"."""
    for root in _server_roots():
        text = text.replace(root, "/…")
    return _PATH_RE.sub(lambda match: "…/" + match.group(0).rstrip("/").rsplit("/", 1)[-1], text)
