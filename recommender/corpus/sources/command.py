"""The `corpus` command: `python -m recommender corpus SOURCE ... --out FILE.jsonl.gz`."""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from recommender.corpus.sources.corpus_file import Summary, check_out_path
from recommender.corpus.sources.errors import SourceError
from recommender.corpus.sources.partial import partial_path

_YEARS_RE = re.compile(r"^\s*(\d{4})?\s*(-)?\s*(\d{4})?\s*$")


def parse_years(text: str | None) -> tuple[int | None, int | None]:
    """"2015-2020", "2015", "2015-" (from) or "-2020" (until) as (first, last)."""
    if not text:
        return None, None
    match = _YEARS_RE.match(text)
    if not match or not (match.group(1) or match.group(3)) or (match.group(3) and not match.group(2)):
        raise SourceError(f"--years {text!r}: write 2015-2020, 2015, 2015- or -2020")
    first = int(match.group(1)) if match.group(1) else None
    last = int(match.group(3)) if match.group(3) else (first if not match.group(2) else None)
    if first is not None and last is not None and first > last:
        raise SourceError(f"--years {text!r}: the first year is after the last")
    return first, last


def add_parser(subparsers) -> None:
    """Add `corpus` and its sources to the main command line."""
    corpus = subparsers.add_parser(
        "corpus", help="build a corpus file of your field (OpenAlex, Semantic Scholar, arXiv, Zotero, PDFs)",
        description="Download or read a field's literature into a JSONL(.gz) corpus for `index`. Downloads resume: "
                    "rerun the same command after an interruption.")
    sources = corpus.add_subparsers(dest="source", required=True, metavar="SOURCE")

    p = sources.add_parser("openalex", help="works from OpenAlex by search terms, topics, venues, authors, years")
    p.add_argument("--search", default="", help="search terms (titles, abstracts and full texts)")
    p.add_argument("--concept", nargs="+", default=[], metavar="ID", help="OpenAlex concept ids (C...)")
    p.add_argument("--topic", nargs="+", default=[], metavar="ID", help="OpenAlex topic ids (T...)")
    p.add_argument("--venue", nargs="+", default=[], metavar="ID", help="OpenAlex source ids (S...): journals, "
                                                                        "proceedings, repositories")
    p.add_argument("--author", nargs="+", default=[], metavar="ID", help="OpenAlex author ids (A...)")
    p.add_argument("--institution", nargs="+", default=[], metavar="ID", help="OpenAlex institution ids (I...)")
    p.add_argument("--years", help="publication years: 2015-2020, 2015, 2015- or -2020")
    _expansion_arguments(p)
    p.add_argument("--limit", type=int, help="at most this many seed works")
    p.add_argument("--mailto", help="your e-mail for OpenAlex's polite pool (default: $OPENALEX_MAILTO)")
    _network_arguments(p, "https://api.openalex.org")
    p.set_defaults(run=run_corpus, build=_openalex)

    p = sources.add_parser("semantic-scholar", help="a seed set from the Semantic Scholar Graph API, with its "
                                                    "references and citations")
    p.add_argument("--seed", nargs="+", default=[], metavar="ID", help="DOIs, arXiv ids, CorpusId:N or S2 paper ids")
    p.add_argument("--seed-file", help="a file of seed ids, one a line (# starts a comment)")
    _expansion_arguments(p)
    _network_arguments(p, "https://api.semanticscholar.org")
    p.set_defaults(run=run_corpus, build=_semantic_scholar)

    p = sources.add_parser("s2-datasets", help="a field from the Semantic Scholar Datasets files you downloaded")
    p.add_argument("folder", help="folder with the papers, abstracts and citations shards (JSONL, gzipped or not)")
    p.add_argument("--field", nargs="+", default=[], metavar="NAME",
                   help='fields of study, e.g. "Computer Science" (any of them)')
    p.add_argument("--venue", nargs="+", default=[], metavar="NAME", help="venue or journal names (any of them)")
    p.add_argument("--years", help="publication years: 2015-2020, 2015, 2015- or -2020")
    p.add_argument("--limit", type=int, help="at most this many papers")
    p.set_defaults(run=run_corpus, build=_datasets)

    p = sources.add_parser("arxiv", help="papers from the arXiv metadata snapshot (Kaggle), by category and years")
    p.add_argument("snapshot", help="arxiv-metadata-oai-snapshot.json (one JSON object a line; may be gzipped)")
    p.add_argument("--category", nargs="+", default=[], metavar="PREFIX",
                   help="categories or their prefixes: cs.CL, cs, hep-th (any of them)")
    p.add_argument("--primary-only", action="store_true", help="match the primary category only, not cross-lists")
    p.add_argument("--years", help="years of the first version: 2015-2020, 2015, 2015- or -2020")
    p.add_argument("--limit", type=int, help="at most this many papers")
    p.set_defaults(run=run_corpus, build=_arxiv)

    p = sources.add_parser("zotero", help="your Zotero library: zotero.sqlite (read from a copy) or its CSL-JSON / "
                                          "BibTeX export")
    p.add_argument("library", help="zotero.sqlite from Zotero's data folder, or an exported .json / .bib file")
    p.add_argument("--collection", help="only this collection (and its subcollections)")
    p.set_defaults(run=run_corpus, build=_zotero)

    p = sources.add_parser("pdfs", help="a folder of PDFs: the title, abstract and authors of each, and the "
                                        "references between them")
    p.add_argument("folder", help="the folder of PDFs (subfolders too); scanned or encrypted PDFs are reported and "
                                  "skipped")
    p.set_defaults(run=run_corpus, build=_pdf_folder)

    for parser in sources.choices.values():
        parser.add_argument("--out", required=True, help="the corpus file to write: NAME.jsonl or NAME.jsonl.gz")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _expansion_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--expand", choices=("none", "refs", "cites", "both"), default="none",
                   help="one hop out of the seed set: the works it references, those citing it, or both")
    p.add_argument("--expand-limit", type=int, help="at most this many papers added by --expand")


def _network_arguments(p: argparse.ArgumentParser, default_url: str) -> None:
    p.add_argument("--retries", type=int, default=5, help="tries after a failed request, with doubling waits "
                                                          "(default 5)")
    p.add_argument("--api-url", default=default_url, help=f"the API's address (default {default_url}; a mirror)")


def run_corpus(args) -> int:
    out = check_out_path(args.out)
    try:
        summary = args.build(args, out)
    except KeyboardInterrupt:
        kept = f"; what was downloaded is kept in {partial_path(out)}" if partial_path(out).exists() else ""
        print(f"interrupted: {out} was not written{kept}; run the same command again to continue", file=sys.stderr)
        return 130
    except SourceError as exc:
        if partial_path(out).exists():
            raise SourceError(f"{exc}; what was downloaded is kept in {partial_path(out)}: run the same command "
                              "again to continue") from None
        raise
    for line in summary.lines():
        print(line)
    return 0


def _openalex(args, out: Path) -> Summary:
    from recommender.corpus.sources.openalex import OpenAlexDownload, OpenAlexQuery
    from recommender.corpus.sources.web import JsonClient

    first, last = parse_years(args.years)
    query = OpenAlexQuery(search=args.search, concepts=tuple(args.concept), topics=tuple(args.topic),
                          venues=tuple(args.venue), authors=tuple(args.author), institutions=tuple(args.institution),
                          year_min=first, year_max=last)
    mailto = args.mailto if args.mailto is not None else os.environ.get("OPENALEX_MAILTO", "")
    if not mailto:
        print("note: without --mailto (or $OPENALEX_MAILTO) OpenAlex serves from its slower common pool",
              file=sys.stderr)
    download = OpenAlexDownload(query, out, expand=args.expand, limit=args.limit, expand_limit=args.expand_limit,
                                mailto=mailto, api_url=args.api_url, progress=not args.quiet,
                                client=JsonClient("OpenAlex", retries=args.retries))
    return download.run()


def _semantic_scholar(args, out: Path) -> Summary:
    from recommender.corpus.sources.semantic_scholar import SemanticScholarDownload
    from recommender.corpus.sources.web import JsonClient

    seeds = list(args.seed)
    if args.seed_file:
        seeds += _read_ids(Path(args.seed_file))
    key = os.environ.get("S2_API_KEY", "")
    client = JsonClient("Semantic Scholar", per_second=1.0, retries=args.retries,
                        headers={"x-api-key": key} if key else {})
    download = SemanticScholarDownload(seeds, out, expand=args.expand, expand_limit=args.expand_limit,
                                       api_url=args.api_url, client=client, progress=not args.quiet)
    return download.run()


def _read_ids(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"--seed-file {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]


def _datasets(args, out: Path) -> Summary:
    from recommender.corpus.sources.semantic_scholar_datasets import DatasetFilter, build_from_datasets

    first, last = parse_years(args.years)
    keep = DatasetFilter(fields_of_study=tuple(args.field), year_min=first, year_max=last, venues=tuple(args.venue))
    return build_from_datasets(args.folder, out, keep, limit=args.limit, progress=not args.quiet)


def _arxiv(args, out: Path) -> Summary:
    from recommender.corpus.sources.arxiv_snapshot import ArxivFilter, build_from_snapshot

    first, last = parse_years(args.years)
    keep = ArxivFilter(categories=tuple(args.category), year_min=first, year_max=last, primary_only=args.primary_only)
    return build_from_snapshot(args.snapshot, out, keep, limit=args.limit, progress=not args.quiet)


def _zotero(args, out: Path) -> Summary:
    from recommender.corpus.sources.zotero import build_from_zotero

    return build_from_zotero(args.library, out, collection=args.collection)


def _pdf_folder(args, out: Path) -> Summary:
    from recommender.corpus.sources.pdf_folder import build_from_pdf_folder

    return build_from_pdf_folder(args.folder, out, progress=not args.quiet)
