"""The attack list of issue 25, re-run: each hostile upload through `python -m recommender review` as its own
process, with how it ended, its wall time, its own peak memory, and whether a secret file outside the upload
showed up in the output (docs/security.md).

    python -m bench.attacks [--index DIR]

Without --index, the demo corpus (263 papers) is indexed into a temporary folder with the default encoder.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench import hostile, machine
from bench.paths import need

ROOT = Path(__file__).resolve().parents[1]


def attacks(folder: Path, secret: Path) -> list[tuple[str, Path, tuple[str, ...]]]:
    """(what, the file uploaded, extra review arguments) for every attack; the files are built here."""
    return [
        ("LaTeX zip: a.tex inputs itself 10 times", hostile.recursion_bomb(folder / "bomb"), ()),
        ("LaTeX zip: a tree of inputs, 10 wide and 9 deep", hostile.include_tree(folder / "tree"), ()),
        (".tex on disk: \\input and \\bibliography of a server file (absolute, ../, link)",
         hostile.outside_includes(folder / "up" / "a" / "b", secret), ()),
        ("LaTeX zip: \\input and \\bibliography of a server file", hostile.outside_includes_zip(folder / "oz", secret),
         ()),
        ("100 citations in one paragraph", hostile.many_citations(folder / "c100", 100), ()),
        ("300 citations in one paragraph", hostile.many_citations(folder / "c300", 300), ()),
        ("1,000 citations in one paragraph (94 KB .tex)", hostile.many_citations(folder / "c1000", 1000), ()),
        ("320 KB .tar.gz holding a 90 MB .tex", hostile.big_tex_archive(folder / "tar"), ()),
        ("49 MB Markdown", hostile.big_markdown(folder / "md"), ()),
        ("DOCX whose text unpacks to 1.5 GB", hostile.docx_text_bomb(folder / "docx"), ()),
        ("DOCX of 3 million empty paragraphs", hostile.docx_many_paragraphs(folder / "paragraphs"), ()),
        ("PDF of 2,000 pages", hostile.long_pdf(folder / "pdf"), ()),
    ]


def outcome_text(outcome: hostile.Outcome) -> str:
    if outcome.code == 0:
        notices = json.loads(outcome.out)["notices"]
        return "reviewed" + (f"; notices: {' / '.join(notices)}" if notices else "")
    lines = outcome.err.strip().splitlines()
    return f"exit {outcome.code}: {lines[-1] if lines else ''}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, help="an index (default: the demo corpus, indexed here)")
    args = parser.parse_args()
    if args.index:
        need(parser, args.index, "--index", "DIR (an index to review against)")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        index = args.index
        if index is None:
            index = folder / "index"
            built = hostile.measured("recommender", "index", str(ROOT / "assets" / "demo_corpus.jsonl"), "--out",
                                     str(index))
            assert built.code == 0, built.err
        secret, token = hostile.canary(folder / "server")
        print(f"machine: {machine.line()}; {time.strftime('%Y-%m-%d')}; "
              f"index {'demo corpus' if args.index is None else index}\n")
        print("| attack | outcome | wall s | peak MB | secret shown |")
        print("| --- | --- | ---: | ---: | --- |")
        for what, path, extra in attacks(folder / "uploads", secret):
            outcome = hostile.review(path, index, *extra)
            print(f"| {what} | {outcome_text(outcome)[:200]} | {outcome.seconds:.1f} | {outcome.peak_mb:.0f} | "
                  f"{'YES' if outcome.shows(token) else 'no'} |", flush=True)
        print(f"\nload after: {machine.load()}")


if __name__ == "__main__":
    main()
