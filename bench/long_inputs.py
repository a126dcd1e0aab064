"""Hostile text against the functions a remote user's text reaches: CPU seconds at three sizes each, to tell
linear from quadratic (or worse) growth. Run it on two checkouts to compare (docs/security.md).

    python -m bench.long_inputs [--json FILE] [--limit 150]

Each case runs in a process of its own with a time limit (--limit seconds), so a pattern that backtracks
without end is reported as "over the limit" instead of stopping the run.
"""
from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

from bench import machine
from bench.paths import write_json
from recommender.documents.errors import DocumentError
from recommender.documents.read import read_document

# name: (module, function, text maker of a size, sizes)
CASES = {
    "hyphenated name (find_markers, \"Ab-Ab-…-Ab!\")":
        ("recommender.documents.markers", "find_markers", lambda n: "Smith and Ab" + "-Ab" * n + "! (2020)",
         (16, 18, 20)),
    "narrative citations in one long word (find_markers, \"Ab-\" × n)":
        ("recommender.documents.markers", "find_markers", lambda n: "Ab-" * (n // 3), (10_000, 20_000, 40_000)),
    "markers side by side (find_markers, \"[1] \" × n)":
        ("recommender.documents.markers", "find_markers", lambda n: "[1] " * (n // 4), (5_000, 10_000, 20_000)),
    "blank lines after a sentence (split_sentences)":
        ("recommender.review.claims", "split_sentences", lambda n: "Hello world [CIT]." + " \n" * (n // 2) + "x",
         (1_000, 2_000, 4_000)),
    "brackets (document_kind, \"[\" × n)":
        ("recommender.serve.context", "document_kind", lambda n: "[" * n, (10_000, 20_000, 40_000)),
    "Chinese without spaces (detect_language)":
        ("recommender.pipeline.language", "detect_language", lambda n: "中" * n, (50_000, 100_000, 200_000)),
    "a long word at a line's end (parse_reference_list)":
        ("recommender.references.parse", "parse_reference_list", lambda n: "a" * n + "\nb", (5_000, 10_000, 20_000)),
    "a URL's next line (parse_reference_list)":
        ("recommender.references.parse", "parse_reference_list",
         lambda n: "Smith, J. 2020. See https://x.org/a\n" + "1" * n + "!", (5_000, 10_000, 20_000)),
    "emphasis never closed (Markdown, \"*a \" × n)":
        ("bench.long_inputs", "read_markdown_text", lambda n: "Intro. " + "*a " * (n // 3), (10_000, 20_000, 40_000)),
    "comments never closed (Markdown, \"<!--\" × n)":
        ("bench.long_inputs", "read_markdown_text", lambda n: "Intro. " + "<!--" * (n // 4), (10_000, 20_000, 40_000)),
    "citation options never closed (plain text, \"\\cite[\" × n)":
        ("bench.long_inputs", "read_plain_text", lambda n: "Intro. " + "\\cite[" * (n // 6), (10_000, 20_000, 40_000)),
    "verbatim never closed (LaTeX, \"\\begin{verbatim}\" × n)":
        ("bench.long_inputs", "read_latex_text", lambda n: "\\begin{document}\n" + "\\begin{verbatim}" * (n // 16)
         + "\n\\end{document}", (40_000, 80_000, 160_000)),
    "a long preamble (LaTeX, \"\\usepackage{x}\" × n)":
        ("bench.long_inputs", "read_latex_text", lambda n: "\\documentclass{article}\n" + "\\usepackage{x}\n" * (n // 15)
         + "\\begin{document}\nA paragraph long enough to be read as a passage of the draft.\n\\end{document}",
         (300_000, 600_000, 1_200_000)),
    "author-year citations against a reference list (Markdown, n paragraphs, 2.5 n references)":
        ("bench.long_inputs", "read_markdown_text", lambda n: citing_draft(n), (250, 500, 1_000)),
    "blank lines in a reference list (parse_reference_list, \"\\n\" × n)":
        ("recommender.references.parse", "parse_reference_list", lambda n: "\n" * n, (25_000, 50_000, 100_000)),
    "blank lines in a text file without a suffix (read_document, \"\\n\" × n)":
        ("bench.long_inputs", "read_unnamed_text", lambda n: "Intro [1].\n" + "\n" * n, (25_000, 50_000, 100_000)),
    "a LaTeX draft citing 3 entries of a .bib of n entries":
        ("bench.long_inputs", "read_latex_citing_three", lambda n: large_bib(n), (15_000, 30_000, 60_000)),
    "\"\\bibitem\" and spaces (parse_reference_list)":
        ("recommender.references.parse", "parse_reference_list", lambda n: "\\bibitem" + " " * n,
         (10_000, 20_000, 40_000)),
    "\"arxiv\" and spaces in a BibTeX note (parse_reference_list)":
        ("recommender.references.parse", "parse_reference_list",
         lambda n: "@misc{k, title = {A title}, note = {arxiv" + " " * n + "x}}", (4_000, 8_000, 16_000)),
    "ids looked for in words, n references of \"a-\" × 998 (check_references)":
        ("bench.long_inputs", "check_reference_text", lambda n: "".join(f"{i}. " + "a-" * 998 + "a\n"
                                                                        for i in range(1, n + 1)), (25, 50, 100)),
    "a command named \"cite\" × n (citation_query: LaTeX or not?)":
        ("bench.long_inputs", "citation_query_at_end", lambda n: "\\" + "cite" * (n // 4) + "\n\nWe use a model.\n",
         (10_000, 20_000, 40_000)),
    "spaces inside a Markdown heading (read_document)":
        ("bench.long_inputs", "read_markdown_text", lambda n: "# a" + " " * n + "x\n\nSome text.\n", (500, 1_000, 2_000)),
    "a LaTeX body of blank lines holding a space (read_document, \" \\n\" × n)":
        ("bench.long_inputs", "read_latex_text", lambda n: "\\begin{document}\nText of the draft.\n" + " \n" * n
         + "More text of the draft.\n\\end{document}\n", (80_000, 160_000, 320_000)),
}


def large_bib(entries: int) -> str:
    """A .bib of `entries` entries, 210 bytes each (60,000 entries: 12 MB)."""
    return "".join(f"@article{{key{i},\n  title = {{A study of thing {i} in the {{Large}} system}},\n"
                   f"  author = {{Smith, John and Doe, Jane and M\\\"uller, Karl}},\n  journal = {{Journal of Things}},\n"
                   f"  year = {{2019}},\n  doi = {{10.1000/x{i}}},\n}}\n\n" for i in range(entries))


def citing_draft(paragraphs: int) -> str:
    """A Markdown draft whose paragraphs each cite one reference by author and year, and its reference list."""
    def name(i: int) -> str:
        return "B" + "".join("abcdefghijklmnopqrstuvwxyz"[i // 26 ** k % 26] for k in (2, 1, 0))

    body = [f"Paragraph {i} builds on the method of {name(i)} et al. (2010) and of {name(i)} (2011)."
            for i in range(paragraphs)]
    references = [f"- {name(i)}, A. (2010). A study number {i}. Journal." for i in range(paragraphs * 5 // 2)]
    return "# Draft\n\n" + "\n\n".join(body) + "\n\n## References\n\n" + "\n".join(references) + "\n"


def _read(text: str, name: str) -> None:
    try:
        read_document(text.encode("utf-8"), name)
    except DocumentError:  # a refusal with a message is an answer too: its time is what counts
        pass


def read_markdown_text(text: str) -> None:
    _read(text, "draft.md")


def read_plain_text(text: str) -> None:
    _read(text, "draft.txt")


def read_latex_text(text: str) -> None:
    _read(text, "draft.tex")


def check_reference_text(text: str) -> None:
    from recommender.references.check import check_references
    from recommender.references.parse import parse_reference_list

    check_references(parse_reference_list(text), [])


def citation_query_at_end(text: str) -> None:
    from recommender.serve.context import citation_query

    citation_query(text, len(text) - 2)


def read_unnamed_text(text: str) -> None:
    _read(text, "notes")


def read_latex_citing_three(bib: str) -> None:
    from recommender.documents.latex import read_latex

    read_latex("\\begin{document}\nGraphs help \\cite{key5,key9}. See \\cite{key123}.\n\\end{document}", [bib])


def _run(module: str, function: str, case: str, size: int, queue) -> None:
    import importlib

    target = getattr(importlib.import_module(module), function)
    text = CASES[case][2](size)
    started = time.process_time()
    target(text)
    queue.put(time.process_time() - started)


def measure(case: str, size: int, limit: float) -> float | None:
    """CPU seconds of one call in a fresh process; None past `limit` seconds of wall time."""
    module, function, _, _ = CASES[case]
    queue = multiprocessing.get_context("fork").Queue()
    process = multiprocessing.get_context("fork").Process(target=_run, args=(module, function, case, size, queue))
    process.start()
    process.join(limit)
    if process.is_alive():
        process.kill()
        process.join()
        return None
    return queue.get() if not queue.empty() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--limit", type=float, default=120.0, help="seconds one call may take")
    args = parser.parse_args(argv)
    results = {"machine": machine.describe(), "date": time.strftime("%Y-%m-%d"), "cases": {}}
    print("| input | sizes (characters; segments for the name) | CPU s at each size |")
    print("| --- | --- | --- |")
    for case, (_, _, _, sizes) in CASES.items():
        seconds = [measure(case, size, args.limit) for size in sizes]
        results["cases"][case] = {"sizes": list(sizes), "cpu_s": seconds}
        shown = ", ".join("over the limit" if s is None else f"{s:.3f}" for s in seconds)
        print(f"| {case} | {', '.join(f'{s:,}' for s in sizes)} | {shown} |", flush=True)
    if args.json:
        write_json(Path(args.json), results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
