"""Command line: `python -m recommender index|recommend|review|evaluate|train|milvus-load ...`."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Container

from recommender.backends.base import BackendError
from recommender.config import DEFAULT_DIVERSITY, METHODS
from recommender.embedding.encoders import DEFAULT_MAX_TOKENS, DEFAULT_RUNTIME, RUNTIMES
from recommender.store.versions import IndexDirectoryError
from recommender.corpus.loaders import CorpusError
from recommender.corpus.loaders.stream import CorpusStream
from recommender.query import Query
from recommender.corpus.sources.command import add_parser as add_corpus_parser
from recommender.terminal import NAME_CHARS, TEXT_CHARS, terminal_safe as safe
from recommender.pipeline.user_input import split_authors


def _read_corpus(paths: list[str], strict: bool, known: Container[str]) -> CorpusStream:
    """Validate every corpus file and report its problems; the papers are read again while the index is built
    (ids repeated across files: the first wins; references to ids in no file and not `known` are dropped)."""
    stream = CorpusStream(paths, strict=strict, known=known)
    for result in stream.results:
        for problem in result.problems[:20]:
            print(problem, file=sys.stderr)
        if len(result.problems) > 20:
            print(f"... and {len(result.problems) - 20} more problems", file=sys.stderr)
        print(result.summary(), file=sys.stderr)
    return stream


def _index_ids(root: str) -> Container[str]:
    """The ids of the live index's papers, which papers being added may cite (none when there is no index)."""
    from recommender.store.index import Index

    try:
        index = Index.load(root, verify=False)
    except IndexDirectoryError:
        return frozenset()
    try:
        return index.position
    finally:
        index.close()


def cmd_index(args) -> int:
    unchanged = "; the live index is unchanged" if (Path(args.out) / "CURRENT").is_file() else ""
    try:
        papers = _read_corpus(args.corpus, args.strict, _index_ids(args.out) if args.add else frozenset())
    except CorpusError as exc:
        raise CorpusError(f"{exc}; nothing was published{unchanged}") from exc
    if not len(papers):
        raise CorpusError(f"no valid papers in {', '.join(args.corpus)}: nothing was published{unchanged}")
    from recommender.store.build import add_to_index, build_index

    started = time.time()
    if args.add:
        version, added = add_to_index(papers, args.out, multilingual=args.multilingual or None, wait=args.wait)
        if not added:
            print(f"nothing to add: all {len(papers)} papers are already in the index; "
                  f"the live version {version.name} is unchanged")
            return 0
        print(f"added {added} papers; live version {version.name} ({time.time() - started:.1f} s)")
    else:
        version = build_index(papers, args.out, max_tokens=args.max_tokens, multilingual=args.multilingual,
                              runtime=args.runtime, source={"files": [str(Path(p).resolve()) for p in args.corpus]},
                              wait=args.wait)
        print(f"indexed {len(papers)} papers into {args.out} (version {version.name}, {time.time() - started:.1f} s)")
    if papers.dangling:
        where = "in no corpus file" + (" and not in the index" if args.add else "")
        print(f"dropped {papers.dangling} reference{'s' if papers.dangling != 1 else ''} to ids {where}",
              file=sys.stderr)
    return 0


def cmd_recommend(args) -> int:
    from recommender.pipeline.recommender import Recommender

    recommender = Recommender.load(args.index, args.backend)
    exclude: set[str] = set()
    for item in args.exclude:
        exclude |= recommender.already_cited(Path(item)) if Path(item).is_file() else {item}
    query = Query(title=args.title, abstract=args.abstract, context=args.context, k=args.k,
                  year_min=args.year_min, year_max=args.year_max, exclude=exclude, diversity=args.diversity,
                  authors=split_authors(args.authors))
    results = recommender.recommend(query)
    route = results.route
    if not route.language.is_english:  # on stderr: stdout stays the result list (or JSON)
        how = "the multilingual index" if route.multilingual else f"the English pipeline ({route.warning})"
        print(f"{route.language.name} query, matched through {how}"
              + (f"; read in English as: {route.gloss}" if route.gloss else ""), file=sys.stderr)
    if args.json:
        print(json.dumps([r.to_dict() for r in results], ensure_ascii=False, indent=1))
        return 0
    for r in results:  # corpus text: no escape sequences or bidi controls reach the terminal, nor 1 MB titles
        authors = ", ".join(r.authors[:3]) + (" et al." if len(r.authors) > 3 else "")
        print(f"{r.rank:2d}. [{r.score:.3f}] {safe(r.title)} — {safe(authors, NAME_CHARS)} "
              f"({r.year or 'n.d.'}) {safe(r.venue, NAME_CHARS)}")
        print(f"    id: {safe(r.paper_id, NAME_CHARS)}{'  doi: ' + safe(r.doi, NAME_CHARS) if r.doi else ''}")
        print(f"    why: {safe(r.explanation, TEXT_CHARS)}")
    return 0


def cmd_evaluate(args) -> int:
    from recommender.evaluation.evaluate import evaluate, format_table
    from recommender.evaluation.queries import queries_from_file, queries_from_split
    from recommender.pipeline.learned import not_trained
    from recommender.pipeline.recommender import Recommender

    recommender = Recommender.load(args.index, args.backend)
    if bool(args.queries) == bool(args.split):
        raise ValueError("give exactly one of --queries FILE or --split FILE:NAME")
    queries = (queries_from_file(args.queries, set(recommender.index.ids)) if args.queries
               else queries_from_split(args.split, recommender.index))
    if args.limit:
        queries = queries[: args.limit]
    unknown = set(args.methods or []) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; choose from {sorted(METHODS)}")
    if any(METHODS[m].rerank for m in args.methods or []) and \
            any(recommender.reranker_for(item.query) is None for item in queries):
        raise not_trained(args.index, "learned model")  # asked for by name: an error, not a skip
    results = evaluate(recommender, queries, {m: METHODS[m] for m in args.methods} if args.methods else None,
                       depth=args.depth)
    print(format_table(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


def cmd_train(args) -> int:
    if args.contexts:
        return train_on_contexts(args)
    from recommender.store.index import Index
    from recommender.pipeline.learned import load_head, model_path, save_head
    from recommender.pipeline.recommender import Recommender
    from recommender.training.encoder import train_head
    from recommender.training.reranker import DEFAULT_MAX_QUERIES, default_cutoff_year, train, training_queries

    index = Index.load(args.index)  # without its learned parts: they are what this command replaces
    if args.split and args.before is not None:
        raise ValueError("give at most one of --split FILE:NAME or --before YEAR")
    before = None if args.split else (args.before if args.before is not None else default_cutoff_year(index))
    queries = training_queries(index, split=args.split, before=before)
    source = f"split {args.split}" if args.split else f"papers before {before}"
    limit = args.max_queries or DEFAULT_MAX_QUERIES
    print(f"training on {min(len(queries), limit)} of {len(queries)} queries ({source}), model {args.model}",
          file=sys.stderr)
    started = time.time()
    head = None
    if not args.no_encoder:
        try:
            head = train_head(index.dense, index.graph, [index.position[q.qid] for q in queries], seed=args.seed)
        except ValueError as exc:
            print(f"encoder not tuned: {exc}", file=sys.stderr)
        else:
            head.info.update({"source": source, "index_version": index.version.name})
            path = save_head(args.index, head)
            print(f"tuned the encoder on {head.info['pairs']} citation pairs in {head.info['seconds']:.0f} s; "
                  f"written to {path}", file=sys.stderr)
    # the reranker learns on top of the encoder queries will use: the new head, else the stored one (if any)
    recommender = Recommender(index, head=head if head is not None else load_head(index.root, index.dense.shape[1]))
    reranker = train(recommender, queries, kind=args.model, max_queries=limit, seed=args.seed, source=source)
    info = reranker.info
    print(f"trained on {info['queries_used']} queries, {info['pairs']} pairs ({info['positives']} cited; "
          f"pool recall {info['pool_recall']:.3f}) in {time.time() - started:.0f} s; "
          f"model written to {model_path(args.index)}")
    return 0


def train_on_contexts(args) -> int:
    from recommender.store.index import Index
    from recommender.pipeline.learned import load_head, model_path
    from recommender.pipeline.recommender import Recommender
    from recommender.training.local import read_contexts, summary, train_local

    if args.split or args.before is not None:
        raise ValueError("--contexts trains the passage reranker from a context file; --split and --before choose "
                         "papers of the citation graph: give one or the other")
    index = Index.load(args.index)
    contexts = read_contexts(args.contexts, index)
    skipped = f"; {contexts.skipped} cite no paper of the index and are left out" if contexts.skipped else ""
    print(f"training the passage reranker on {len(contexts.queries)} contexts from {contexts.citing_papers} citing "
          f"papers, model {args.model}{skipped}", file=sys.stderr)
    recommender = Recommender(index, head=load_head(index.root, index.dense.shape[1]))
    reranker = train_local(recommender, contexts, kind=args.model, seed=args.seed)
    print(summary(reranker.info, model_path(args.index, local=True)))
    return 0


def cmd_contexts(args) -> int:
    from recommender.store.index import Index
    from recommender.training.document_contexts import contexts_from_files, write_contexts

    out = Path(args.out)
    if not out.parent.is_dir():  # before reading the papers, which may take minutes
        raise ValueError(f"cannot write {out}: the folder {out.parent} does not exist")
    found = contexts_from_files([Path(p) for p in args.papers], Index.load(args.index),
                                includes_outside=args.includes_outside)
    for document in found:
        print(document.describe(), file=sys.stderr)
    rows = [row for document in found for row in document.rows]
    read = [d for d in found if not d.problem]
    if not rows:
        raise ValueError(f"no citation contexts: none of the {len(read)} papers read cites a paper of the index "
                         f"through its reference list ({out} not written)")
    write_contexts(rows, out)
    print(f"wrote {len(rows)} contexts from {sum(bool(d.rows) for d in found)} of {len(found)} papers to {args.out}; "
          f"train on them with: python -m recommender train --index {args.index} --contexts {args.out}")
    return 0


def cmd_serve(args) -> int:
    from recommender.serve.http import TOKEN_ENV, Settings, serve

    settings = Settings(token=args.token or os.environ.get(TOKEN_ENV, ""), cors_origins=tuple(args.cors_origin),
                        max_body=args.max_body, rate_limit=args.rate_limit, threads=args.threads)
    serve(args.index, host=args.host, port=args.port, settings=settings, backend=args.backend)
    return 0


def cmd_review(args) -> int:
    from recommender.documents.read import read_document
    from recommender.pipeline.recommender import Recommender
    from recommender.review.document import DocumentReviewer

    references = Path(args.references).read_text(encoding="utf-8", errors="replace") if args.references else None
    document = read_document(Path(args.document), Path(args.document).name, bib=references,
                             includes_outside=args.includes_outside)
    online = []
    if args.online:
        from recommender.references.run import sources
        online = sources(online=True, mailto=args.mailto)
    report = DocumentReviewer(Recommender.load(args.index, args.backend)).review(document, place_k=args.k,
                                                                                 online=online)
    text = json.dumps(report.to_dict(), ensure_ascii=False, indent=1)
    if args.json == "-":
        print(text)
        return 0
    if args.json:
        Path(args.json).write_text(text, encoding="utf-8")
        print(f"review written to {args.json}", file=sys.stderr)
    print(format_review(report))
    return 0


def cmd_check_refs(args) -> int:
    from recommender.references.check import check_references
    from recommender.references.retractions import RetractionStore
    from recommender.references.run import format_checks, read_reference_file, sources, to_json

    items = read_reference_file(Path(args.file), includes_outside=args.includes_outside)
    index = None
    if args.index:
        from recommender.store.index import Index
        index = Index.load(args.index)
    asked = sources(index, online=args.online, mailto=args.mailto, budget_s=args.budget)
    store = RetractionStore.open(args.store)
    checks = check_references(items, asked, store, budget_s=args.budget)
    searched = [source.name for source in asked] + (["Retraction Watch (imported)"] if store else [])
    if args.json:
        print(json.dumps(to_json(items, checks, searched), ensure_ascii=False, indent=1))
    else:
        print(format_checks(items, checks, searched))
    return 0


def cmd_retractions(args) -> int:
    from recommender.references.retractions import RetractionStore, default_store_path, import_csv

    if args.action == "import":
        if not args.file:
            raise ValueError("give the Retraction Watch CSV to import: python -m recommender retractions import FILE")
        print(import_csv(Path(args.file), args.store).describe())
        return 0
    store = RetractionStore.open(args.store)
    if store is None:
        raise FileNotFoundError(f"nothing imported at {args.store or default_store_path()}: run "
                                "python -m recommender retractions import FILE")
    for key, value in store.info().items():
        print(f"{key}: {value}")
    return 0


def cmd_lsp(args) -> int:
    from recommender.serve.lsp import serve_stdio

    return serve_stdio(args.index, args.backend)


def cmd_milvus_load(args) -> int:
    from recommender.backends.milvus import parse_target
    from recommender.backends.milvus_load import load_index
    from recommender.store.index import Index
    from recommender.pipeline.learned import load_head

    target = parse_target(args.uri)
    index = Index.load(args.index)
    head = None if args.no_tuned else load_head(index.root, index.dense.shape[1])
    report = load_index(index, target, head, batch=args.batch, segment_rows=args.segment_rows)
    print(f"loaded {report.papers} papers into {target} ({report.collection}) in {report.seconds:.1f} s")
    return 0


def format_review(report) -> str:
    """The review as plain text for the terminal."""
    doc, lines = report.document, []
    found = sum(1 for pid in report.matches if pid)
    lines.append(f"{safe(doc.title) or '(untitled)'}: {len(doc.passages)} passages, {len(report.places)} citation "
                 f"places, {found} of {len(doc.references)} references found in the corpus")
    lines += [f"note: {safe(notice, TEXT_CHARS)}" for notice in report.notices]
    if report.checks:
        from recommender.references.run import summary
        counts = summary(report.checks)
        lines.append("reference check: " + ", ".join(f"{n} {verdict}" for verdict, n in counts.items() if n)
                     + " (check-refs for the details; flags are leads to check, not verdicts)")
        lines += [f"   {check.verdict.upper()}: {safe(item.title or item.raw, TEXT_CHARS)}"
                  for item, check in zip(doc.references, report.checks) if check.verdict in ("retracted",)]
    for place in report.places:
        if not place.suggestions:
            continue
        label = "fill" if place.marker.placeholder else "also consider"
        lines.append(f"\n[{_where(place.passage)}] {safe(place.marker.text, NAME_CHARS)} ({label}): "
                     f"{safe(place.context, TEXT_CHARS)}")
        lines += [f"   {s.score:6.3f}  {safe(s.title)}  ({safe(s.paper_id, NAME_CHARS)})" for s in place.suggestions]
    if report.uncited:
        lines.append("\nUncited claims:")
        for claim in report.uncited:
            lines.append(f"   [{_where(claim.passage)}] {claim.score:.2f}  {safe(claim.sentence, TEXT_CHARS)}")
            lines += [f"         may lack: {safe(s.title)}  ({safe(s.paper_id, NAME_CHARS)})"
                      for s in claim.suggestions[:3]]
    lines.append("\nLikely missing:" if report.missing else "\nNothing missing was found.")
    for paper in report.missing:
        where = f"  [{_where(paper.passage)}]" if paper.passage else ""
        lines.append(f"   {paper.score:5.2f}  {safe(paper.title)}  ({safe(paper.paper_id, NAME_CHARS)}){where}")
        lines.append(f"          {safe(paper.why, TEXT_CHARS)}")
    return "\n".join(lines)


def _where(passage) -> str:
    return safe(", ".join(f"{key} {value}" for key, value in passage.where.items()), NAME_CHARS)


def add_includes_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--includes-outside", action="store_true",
                   help="let a LaTeX file's \\input and \\bibliography name files outside its own folder (never "
                        "for files from others)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m recommender", description="Citation recommender.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="build or extend a persistent index")
    p.add_argument("corpus", nargs="+", help="JSONL(.gz), BibTeX, CSL-JSON or OpenAlex files")
    p.add_argument("--out", required=True, help="index directory")
    p.add_argument("--add", action="store_true", help="add the papers to the existing index")
    p.add_argument("--strict", action="store_true", help="abort on the first bad record")
    p.add_argument("--multilingual", action="store_true", help="also embed with the multilingual encoder")
    p.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, help="encoder input length")
    p.add_argument("--runtime", choices=RUNTIMES, default=DEFAULT_RUNTIME,
                   help="what runs the English encoder of a new index (default: %(default)s; --add keeps the "
                        "index's own; queries always use the index's own)")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="when another build of the same index is running, wait this long for it (default: stop "
                        "at once with an error)")
    p.set_defaults(run=cmd_index)

    p = sub.add_parser("recommend", help="recommend papers for a draft or a passage")
    p.add_argument("--index", required=True)
    p.add_argument("--title", default="")
    p.add_argument("--abstract", default="")
    p.add_argument("--context", default="", help="passage with a [CIT] placeholder (local mode)")
    p.add_argument("-k", type=int, default=10)
    p.add_argument("--year-min", type=int)
    p.add_argument("--year-max", type=int)
    p.add_argument("--authors", default="", help="the draft's authors, separated by ';' (their earlier papers "
                                                   "become candidates)")
    p.add_argument("--exclude", nargs="*", default=[], help="ids, or a .bib / reference list already cited")
    p.add_argument("--diversity", type=float, default=DEFAULT_DIVERSITY, help="author diversity (0 = plain ranking)")
    p.add_argument("--json", action="store_true")
    add_backend_option(p)
    p.set_defaults(run=cmd_recommend)

    p = sub.add_parser("review", help="review a whole draft or submission (PDF, LaTeX, Markdown, text, DOCX)")
    p.add_argument("document", help="PDF, .tex, zipped LaTeX project, .md, .txt or .docx")
    p.add_argument("--index", required=True)
    p.add_argument("--references", help="a .bib or reference list to use instead of the document's own")
    p.add_argument("-k", type=int, default=5, help="suggestions per citation place")
    p.add_argument("--json", metavar="OUT", help="write the review as JSON to OUT ('-': standard output)")
    p.add_argument("--online", action="store_true", help="the reference check also asks OpenAlex and Crossref")
    p.add_argument("--mailto", help="your e-mail for the APIs' polite pools (default: $OPENALEX_MAILTO)")
    add_includes_option(p)
    add_backend_option(p)
    p.set_defaults(run=cmd_review)

    p = sub.add_parser("serve", help="HTTP API for editor plugins and scripts (OpenAPI at /docs)")
    p.add_argument("--index", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token", default="", help="bearer token every request must carry (default: the "
                                               "CITREC_API_TOKEN environment variable, which keeps it out of ps)")
    p.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                   help="a web origin whose pages may call the API, e.g. https://www.overleaf.com (repeatable)")
    p.add_argument("--max-body", type=int, default=2 * 1024 * 1024, metavar="BYTES",
                   help="largest request body (default 2 MiB; /review takes a document at the upload limit)")
    p.add_argument("--rate-limit", type=int, default=300, metavar="N", help="requests a minute per client "
                                                                             "address (default 300; 0: no limit)")
    p.add_argument("--threads", type=int, default=4, help="requests the engine answers at once (default 4)")
    add_backend_option(p)
    p.set_defaults(run=cmd_serve)

    p = sub.add_parser("evaluate", help="compare pipeline variants on a query set")
    p.add_argument("--index", required=True)
    p.add_argument("--queries", help="query file (qid, context, citing_title, citing_abstract, relevant)")
    p.add_argument("--split", help="splits.json:NAME (query papers of a split)")
    p.add_argument("--methods", nargs="+", help=f"default: all that can run ({', '.join(METHODS)})")
    p.add_argument("--limit", type=int, help="evaluate only the first N queries")
    p.add_argument("--depth", type=int, default=1000, help="ranked list length and least pool size (default "
                                                           "1000; --depth 10 times the app's setting: pool 200, k 10)")
    p.add_argument("--json", help="write the metrics here")
    add_backend_option(p)
    p.set_defaults(run=cmd_evaluate)

    p = sub.add_parser("train", help="tune the encoder and train the reranker on the index's citations")
    p.add_argument("--index", required=True)
    p.add_argument("--split", help="splits.json:NAME: train on the query papers of a split")
    p.add_argument("--before", type=int, help="without --split: train on corpus papers older than this year "
                                              "(default: the year before which ~80%% of citing papers lie)")
    p.add_argument("--max-queries", type=int, help="seeded subsample of the training queries (default 3000)")
    p.add_argument("--model", choices=["lambdarank", "logreg", "hgb"], default="lambdarank",
                   help="LightGBM LambdaRank (default; best MRR on hep-th dev), logistic regression or "
                        "gradient-boosted trees (both pointwise)")
    p.add_argument("--no-encoder", action="store_true", help="keep the base encoder (train the reranker only)")
    p.add_argument("--contexts", metavar="FILE", help="train the passage reranker instead, on citation contexts: "
                                                     "JSONL with context ([CIT] passage), relevant (cited ids), "
                                                     "citing_title, citing_abstract, citing_id (no graph needed)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=cmd_train)

    p = sub.add_parser("contexts", help="collect citation contexts from full papers (PDF, LaTeX, DOCX, Markdown, "
                                        "text) for train --contexts")
    p.add_argument("--index", required=True)
    p.add_argument("papers", nargs="+", help="paper files, or folders searched for them")
    p.add_argument("-o", "--out", default="contexts.jsonl", help="the context file to write (.jsonl or .jsonl.gz)")
    add_includes_option(p)
    p.set_defaults(run=cmd_contexts)

    p = sub.add_parser("milvus-load", help="push an index into Milvus (for --backend milvus:...)")
    p.add_argument("--index", required=True)
    p.add_argument("--uri", required=True, help="milvus:PATH.db (embedded milvus-lite) or milvus://host:19530, "
                                                "optionally ending in ?collection=NAME (default papers)")
    p.add_argument("--batch", type=int, default=1000, help="papers per insert call")
    p.add_argument("--segment-rows", type=int, default=0, help="flush every N papers (0: once at the end)")
    p.add_argument("--no-tuned", action="store_true", help="leave out the citation-tuned vectors of a trained index")
    p.set_defaults(run=cmd_milvus_load)

    p = sub.add_parser("check-refs", help="check every reference of a .bib, a reference list or a document: "
                                          "verified, details differ, not found, retracted or not checked",
                       description="Check each reference against the corpus (--index), the imported Retraction "
                                   "Watch data (see `retractions`) and, with --online, OpenAlex and Crossref. "
                                   "Flags are leads to check, not verdicts.")
    p.add_argument("file", help=".bib, a reference list (.txt), or a document review reads (PDF, LaTeX, DOCX, ...)")
    p.add_argument("--index", help="the corpus to check against first (offline)")
    p.add_argument("--online", action="store_true", help="also ask OpenAlex and Crossref (cached on disk; OpenAlex's "
                                                       "free API key in $OPENALEX_API_KEY raises its daily allowance)")
    p.add_argument("--mailto", help="your e-mail for the APIs' polite pools (default: $OPENALEX_MAILTO)")
    p.add_argument("--budget", type=float, default=60.0, metavar="SECONDS",
                   help="time the online sources may take for the whole file (default 60)")
    p.add_argument("--store", help="the retraction store (default: $CITREC_RETRACTIONS, else "
                                   "$XDG_DATA_HOME/citrec/retractions.sqlite)")
    p.add_argument("--json", action="store_true", help="the verdicts as JSON on standard output")
    add_includes_option(p)
    p.set_defaults(run=cmd_check_refs)

    p = sub.add_parser("retractions", help="import the Retraction Watch data file, checked offline afterwards",
                       description="`import FILE` reads the Retraction Watch CSV (published openly by Crossref: "
                                   "https://gitlab.com/crossref/retraction-watch-data) into a local SQLite store, "
                                   "replacing what it held; `info` says what the store holds. The store is "
                                   "--store FILE, else $CITREC_RETRACTIONS, else $XDG_DATA_HOME/citrec/"
                                   "retractions.sqlite (~/.local/share/citrec/retractions.sqlite).")
    p.add_argument("action", choices=["import", "info"])
    p.add_argument("file", nargs="?", help="the CSV to import")
    p.add_argument("--store", help="the store's file (see above)")
    p.set_defaults(run=cmd_retractions)

    p = sub.add_parser("lsp", help="citation language server over stdio, for LaTeX and Markdown in any LSP editor")
    p.add_argument("--index", required=True)
    add_backend_option(p)
    p.set_defaults(run=cmd_lsp)

    add_corpus_parser(sub)
    return parser


def add_backend_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", help="where candidates come from: in-process (default), milvus:PATH.db "
                                          "(milvus-lite) or milvus://host:19530 (see milvus-load)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (CorpusError, IndexDirectoryError, BackendError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: the live index is unchanged; run the same command again to resume", file=sys.stderr)
        return 130
