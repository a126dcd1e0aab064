"""The citation language server: `python -m recommender lsp --index DIR`, over stdio (pygls), for LaTeX and
Markdown/Pandoc documents.

    completion   inside `\\cite{`, `\\citep{`, `\\citet{`, `\\parencite{`, `\\textcite{`, `\\autocite{` ... (any
                 key of several) or a Pandoc `[@` / `@`: the papers for the citation at the cursor, asked in local
                 mode (`context.citation_query`); papers the .bib already holds come first under their own keys,
                 papers the document already cites are left out (a .bib key typed still completes)
    accept       a paper the .bib lacks: its key is inserted and the command ADD_COMMAND applies one workspace
                 edit that appends its BibTeX entry (the app's export) to the .bib the document names
    hover        on a key: the paper card, and how close it is to the sentence that cites it
    diagnostics  sentences that read like uncited claims (Information; the review's claim scores), each with code
                 actions that cite one of the top papers there (documents of up to MAX_TEXT_CHARS; a larger
                 one gets a single diagnostic saying so); .bib entries no index paper matches (Hint)

The index loads once, before the server answers. One engine thread answers every request in turn: a completion
or code action that a newer one for the same document supersedes before its turn is dropped (the client's
`$/cancelRequest` drops it too), and a document's diagnostics wait for a pause in typing (DEBOUNCE_S) and give
way to requests between batches of CLAIM_BATCH sentences.
"""
from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import os
import sys
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from recommender.corpus.export import citation_keys
from recommender.documents.limits import MAX_CLAIMS, MAX_TEXT_CHARS
from recommender.paper import Paper
from recommender.pipeline.confidence import strength
from recommender.pipeline.recommender import Recommender
from recommender.query import CITATION_MARK, Query, RecommendResult
from recommender.references.match import ReferenceIndex
from recommender.review.claims import CLAIM_THRESHOLD, ClaimScorer, split_sentences
from recommender.serve.bibliography import Bibliography, bibliography_paths, bibtex_entry, read_bibliography
from recommender.serve.citations import CitationSite, citation_at, find_citations
from recommender.serve.context import citation_query, document_kind
from recommender.serve.sentences import SourceSentence, body_sentences

NAME = "citation-recommender"
VERSION = "1.0"
ADD_COMMAND = "citation-recommender.addToBibliography"
CLAIM_CODE = "uncited-claim"
UNMATCHED_CODE = "not-in-index"
TOO_LARGE_CODE = "too-large"
COMPLETION_K = 10  # papers offered at a citation
ACTION_K = 5  # papers offered to cite an uncited claim
DEBOUNCE_S = 0.5  # pause in typing before a document's diagnostics are computed again
CLAIM_BATCH = 32  # sentences scored per turn of the engine thread
ANSWERS_KEPT = 256  # recent answers reused when the same query comes again (typing a key's letters)
SENTENCES_KEPT = 50_000  # scored sentences remembered across edits
LOG = logging.getLogger(__name__)
LANGUAGES = {"latex": "latex", "tex": "latex", "plaintex": "latex", "context": "latex", "markdown": "markdown",
             "pandoc": "markdown", "rmd": "markdown", "quarto": "markdown", "plaintext": "text", "bibtex": "bibtex"}


class Superseded(Exception):
    """A newer request for the same document came before this one's turn."""


class CitationServer(LanguageServer):
    """The language server over one loaded recommender."""

    def __init__(self, recommender: Recommender):
        super().__init__(NAME, VERSION)
        self.recommender = recommender
        self.claims = ClaimScorer()
        self._engine = ThreadPoolExecutor(1, thread_name_prefix="citation-engine")
        self.references: ReferenceIndex | None = None  # the engine thread's first job builds it
        self._engine.submit(self._index_references)
        self._tickets = itertools.count()
        self._newest: dict[tuple[str, str], int] = {}  # (purpose, document) -> the newest request's ticket
        self._answers: OrderedDict[tuple, RecommendResult] = OrderedDict()
        self._scored: dict[tuple[str, frozenset[str]], tuple[float, str]] = {}  # sentence -> score, nearest title
        self._bibs: dict[Path, Bibliography] = {}
        self._pending: dict[str, asyncio.Task] = {}  # document -> its diagnostics, waiting or running
        options = types.CompletionOptions(trigger_characters=["{", ",", "@", ";"], resolve_provider=True)
        self.feature(types.TEXT_DOCUMENT_COMPLETION, options)(_handler(self.completion))
        self.feature(types.COMPLETION_ITEM_RESOLVE)(_handler(self.resolve))
        self.feature(types.TEXT_DOCUMENT_HOVER)(_handler(self.hover))
        self.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix]))(_handler(self.code_action))
        for event in (types.TEXT_DOCUMENT_DID_OPEN, types.TEXT_DOCUMENT_DID_CHANGE, types.TEXT_DOCUMENT_DID_SAVE):
            self.feature(event)(_handler(self.changed))
        self.feature(types.TEXT_DOCUMENT_DID_CLOSE)(_handler(self.closed))
        self.command(ADD_COMMAND)(_handler(self.add_to_bibliography))

    # ------------------------------------------------------------------ the engine thread

    def _index_references(self) -> None:
        """The look-up tables .bib entries are matched with (seconds for a large index: done while the editor
        starts; every later job runs after it)."""
        self.references = ReferenceIndex(self.recommender.index.all_papers())

    async def _run(self, function, *args):
        return await asyncio.wrap_future(self._engine.submit(function, *args))

    async def _newest_only(self, purpose: tuple[str, str], function, *args):
        """`function(*args)` on the engine thread, unless a newer call for the same purpose came before its turn
        (Superseded)."""
        ticket = next(self._tickets)
        self._newest[purpose] = ticket

        def job():
            if self._newest.get(purpose) != ticket:
                raise Superseded
            return function(*args)
        return await self._run(job)

    def _recommend(self, query: Query) -> RecommendResult:
        key = (query.title, query.abstract, query.context, query.k, frozenset(query.exclude))
        if key in self._answers:
            self._answers.move_to_end(key)
            return self._answers[key]
        result = self.recommender.recommend(query)
        self._answers[key] = result
        if len(self._answers) > ANSWERS_KEPT:
            self._answers.popitem(last=False)
        return result

    # ------------------------------------------------------------------ documents and their bibliographies

    def _kind(self, document: TextDocument) -> str:
        return LANGUAGES.get(document.language_id or "") or document_kind(document.source)

    def _bibliography(self, path: Path) -> Bibliography:
        """The .bib as the editor has it (its open buffer, else the file), matched to the index once per text."""
        open_document = self.workspace.text_documents.get(from_fs_path(str(path)))
        text = open_document.source if open_document is not None else None
        if text is None and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
        known = self._bibs.get(path)
        if known is None or known.text != (text or "") or known.exists != (text is not None):
            known = self._bibs[path] = read_bibliography(path, text, self.references)
        return known

    def _bibliographies(self, document: TextDocument) -> list[Bibliography]:
        path = Path(to_fs_path(document.uri) or document.path)
        return [self._bibliography(p) for p in bibliography_paths(document.source, path)]

    @staticmethod
    def _cited(text: str, kind: str, bibs: list[Bibliography], skip: CitationSite | None = None) -> set[str]:
        """Index papers the document cites (by .bib keys), but for the key being written at `skip`."""
        keys = {key.text for citation in find_citations(text, pandoc=kind != "latex") for key in citation.keys
                if skip is None or (key.start, key.end) != (skip.key_start, skip.key_end)}
        return {entry.paper_id for bib in bibs for key, entry in bib.entries.items()
                if key in keys and entry.paper_id}

    # ------------------------------------------------------------------ completion

    async def completion(self, params: types.CompletionParams) -> types.CompletionList | None:
        document = self.workspace.get_text_document(params.text_document.uri)
        text, kind = document.source, self._kind(document)
        offset = document.offset_at_position(params.position)
        site = citation_at(text, offset, pandoc=kind != "latex") if kind != "bibtex" else None
        if site is None:
            return None
        bibs = await self._run(self._bibliographies, document)
        query = citation_query(text, offset, k=COMPLETION_K, exclude=self._cited(text, kind, bibs, site))
        if not query.main_text:
            return types.CompletionList(is_incomplete=False, items=self._typed(site, document, bibs, []))
        try:
            result = await self._newest_only(("completion", document.uri), self._recommend, query)
        except Superseded:
            return types.CompletionList(is_incomplete=True, items=[])
        items = self._items(result, site, document, bibs)
        return types.CompletionList(is_incomplete=False, items=items + self._typed(site, document, bibs, items))

    def _items(self, result: RecommendResult, site: CitationSite, document: TextDocument,
               bibs: list[Bibliography]) -> list[types.CompletionItem]:
        where = types.Range(document.client_position_at_offset(site.key_start),
                            document.client_position_at_offset(site.key_end))
        target = bibs[0] if bibs else None
        items, taken = [], set()
        for rank, (recommendation, paper) in enumerate(zip(result, result.papers)):
            held = next(((bib, key) for bib in bibs if (key := bib.key_of(paper.id))), None)
            if held:
                key, note = held[1], f"✓ in {held[0].path.name}"
            else:
                key = target.new_key(paper, taken) if target else citation_keys([paper])[0]
                note = f"adds it to {target.path.name}" if target else "no .bib named by the document"
            taken.add(key)
            command = None if held or target is None else types.Command(
                f"Add {key} to {target.path.name}", ADD_COMMAND,
                arguments=[from_fs_path(str(target.path)), paper.id, key])
            items.append(types.CompletionItem(
                label=key, kind=types.CompletionItemKind.Reference, detail=f"{byline(paper)} ({note})",
                label_details=types.CompletionItemLabelDetails(description=_short(paper.title, 60)),
                documentation=types.MarkupContent(types.MarkupKind.Markdown, card(paper) + "\n\n*Why:* "
                                                  + _md(recommendation.explanation)),
                sort_text=f"{0 if held else 1}{rank:03d}", filter_text=key,
                text_edit=types.TextEdit(where, key), command=command,
                data={"paper_id": paper.id, "key": key, "in_bibliography": bool(held)}))
        return items

    @staticmethod
    def _typed(site: CitationSite, document: TextDocument, bibs: list[Bibliography],
               offered: list[types.CompletionItem]) -> list[types.CompletionItem]:
        """The .bib keys that start with what is typed at the cursor and were not offered already."""
        if not site.prefix:
            return []
        where = types.Range(document.client_position_at_offset(site.key_start),
                            document.client_position_at_offset(site.key_end))
        seen = {item.label for item in offered}
        return [types.CompletionItem(label=entry.key, kind=types.CompletionItemKind.Reference,
                                     detail=f"{_short(entry.title, 80)} (✓ in {bib.path.name})",
                                     sort_text=f"2{entry.key}", text_edit=types.TextEdit(where, entry.key))
                for bib in bibs for entry in bib.entries.values()
                if entry.key.casefold().startswith(site.prefix.casefold()) and entry.key not in seen]

    async def resolve(self, item: types.CompletionItem) -> types.CompletionItem:
        """The BibTeX entry the item adds, under its documentation."""
        data = item.data if isinstance(item.data, dict) else {}
        if data.get("paper_id") in self.recommender.index.position and not data.get("in_bibliography"):
            paper = await self._run(self._paper, data["paper_id"])
            entry = bibtex_entry(paper, str(data.get("key") or citation_keys([paper])[0]))
            shown = item.documentation.value if isinstance(item.documentation, types.MarkupContent) else ""
            item.documentation = types.MarkupContent(types.MarkupKind.Markdown,
                                                     f"{shown}\n\n```bibtex\n{entry.strip()}\n```".strip())
        return item

    def _paper(self, paper_id: str) -> Paper:
        return self.recommender.index.papers([self.recommender.index.position[paper_id]])[0]

    async def add_to_bibliography(self, bib_uri: str, paper_id: str, key: str) -> bool:
        """ADD_COMMAND: append the paper's BibTeX entry under `key` to the .bib (one workspace edit); False when
        the .bib holds the key already or the editor refused the edit."""
        if paper_id not in self.recommender.index.position:
            raise ValueError(f"no paper {paper_id!r} in the index")
        path = Path(to_fs_path(bib_uri) or bib_uri)
        bib = await self._run(self._bibliography, path)
        if key in bib.entries:
            return False
        paper = await self._run(self._paper, paper_id)
        edit = types.WorkspaceEdit()
        self._append(edit, bib, paper, key)
        answer = await self.workspace_apply_edit_async(
            types.ApplyWorkspaceEditParams(edit=edit, label=f"Add {key} to {path.name}"))
        return bool(answer.applied)

    def _append(self, edit: types.WorkspaceEdit, bib: Bibliography, paper: Paper, key: str) -> None:
        """Add to `edit` the text edit that appends the paper's entry to the .bib (creating the file if need be)."""
        uri = from_fs_path(str(bib.path))
        lines = bib.text.split("\n")
        end = self.workspace.position_codec.position_to_client_units(
            lines, types.Position(len(lines) - 1, len(lines[-1])))
        change = types.TextEdit(types.Range(end, end), bib.addition(paper, key))
        if bib.exists:
            edit.changes = {**(edit.changes or {}), uri: [*(edit.changes or {}).get(uri, []), change]}
            return
        edit.document_changes = [
            *(edit.document_changes or []), types.CreateFile(uri=uri, options=types.CreateFileOptions(
                ignore_if_exists=True)),
            types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None), [change])]

    # ------------------------------------------------------------------ hover

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        document = self.workspace.get_text_document(params.text_document.uri)
        text, kind = document.source, self._kind(document)
        offset = document.offset_at_position(params.position)
        site = citation_at(text, offset, pandoc=kind != "latex") if kind != "bibtex" else None
        key = text[site.key_start:site.key_end] if site else ""
        if not key:
            return None
        bibs = await self._run(self._bibliographies, document)
        entry = next((bib.entries[key] for bib in bibs if key in bib.entries), None)
        if entry is None:
            shown = f"**{_md(key)}** is in no .bib the document names"
        elif entry.paper_id is None:
            shown = f"**{_md(key)}**: {_md(entry.title) or 'an entry'} (no paper in the index matches it)"
        else:
            shown = await self._run(self._card_with_closeness, entry.paper_id, citing_sentence(text, site))
        where = types.Range(document.client_position_at_offset(site.key_start),
                            document.client_position_at_offset(site.key_end))
        return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, shown), where)

    def _card_with_closeness(self, paper_id: str, sentence: str) -> str:
        shown = card(self._paper(paper_id))
        if sentence:
            closeness = float(self.recommender.closeness(sentence, [paper_id])[0])
            shown += f"\n\nCloseness to this sentence: {closeness:.2f} ({strength(closeness, 'english')})"
        return shown

    # ------------------------------------------------------------------ diagnostics

    async def changed(self, params) -> None:
        """didOpen, didChange, didSave: the document's diagnostics again after a pause in typing."""
        uri = params.text_document.uri
        waiting = self._pending.pop(uri, None)
        if waiting is not None:
            waiting.cancel()
        self._pending[uri] = asyncio.create_task(self._diagnose_later(uri))

    async def closed(self, params: types.DidCloseTextDocumentParams) -> None:
        waiting = self._pending.pop(params.text_document.uri, None)
        if waiting is not None:
            waiting.cancel()

    async def _diagnose_later(self, uri: str) -> None:
        await asyncio.sleep(DEBOUNCE_S)
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return
        try:
            kind = self._kind(document)
            if kind == "bibtex":
                bibs = [await self._run(self._bibliography, Path(to_fs_path(uri) or document.path))]
            else:
                bibs = await self._run(self._bibliographies, document)
                found = await self._claims(document, kind, bibs)
                self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, found, document.version))
            for bib in bibs:
                self._publish_unmatched(bib)
        except Exception:  # logged: the server goes on
            LOG.exception("diagnostics of %s failed", uri)

    async def _claims(self, document: TextDocument, kind: str, bibs: list[Bibliography]) -> list[types.Diagnostic]:
        """Information diagnostics on the sentences that read like uncited claims (the MAX_CLAIMS likeliest)."""
        text = document.source
        if len(text) > MAX_TEXT_CHARS:
            return [types.Diagnostic(
                types.Range(types.Position(0, 0), types.Position(0, 0)),
                f"This document is {len(text):,} characters; uncited claims are checked in documents of up to "
                f"{MAX_TEXT_CHARS:,}.", severity=types.DiagnosticSeverity.Information, code=TOO_LARGE_CODE,
                source=NAME)]
        cited = frozenset(self._cited(text, kind, bibs))
        sentences = [s for s in await asyncio.to_thread(body_sentences, text, kind) if not s.cited]
        unknown = list(dict.fromkeys(s.text for s in sentences if (s.text, cited) not in self._scored))
        for first in range(0, len(unknown), CLAIM_BATCH):
            await self._run(self._score, unknown[first:first + CLAIM_BATCH], cited)
        scored = [(sentence, *self._scored[(sentence.text, cited)]) for sentence in sentences]
        claims = sorted((item for item in scored if item[1] >= CLAIM_THRESHOLD), key=lambda item: -item[1])
        return [self._claim(document, *item) for item in sorted(claims[:MAX_CLAIMS], key=lambda item: item[0].start)]

    def _score(self, sentences: list[str], cited: frozenset[str]) -> None:
        """Claim scores of sentences, with what the corpus says of each (its nearest papers), remembered."""
        if len(self._scored) > SENTENCES_KEPT:
            self._scored.clear()
        nearest = self.recommender.nearest_papers(sentences, set(cited), 2)
        evidence = [(float(c[0]), float(c[0] - (c[1] if len(c) > 1 else 0.0))) if len(c) else None
                    for _, c in nearest]
        titles = [self.recommender.index.titles[p[0]] if p else "" for p, _ in nearest]
        for sentence, score, title in zip(sentences, self.claims.score(sentences, evidence), titles):
            self._scored[(sentence, cited)] = (float(score), title)

    @staticmethod
    def _claim(document: TextDocument, sentence: SourceSentence, score: float, nearest: str) -> types.Diagnostic:
        where = types.Range(document.client_position_at_offset(sentence.start),
                            document.client_position_at_offset(sentence.end))
        message = f"Reads like a claim that needs a citation ({score:.2f})"
        if nearest:
            message += f"; the closest paper is “{_short(nearest, 100)}”"
        return types.Diagnostic(where, message + ".", severity=types.DiagnosticSeverity.Information, code=CLAIM_CODE,
                                source=NAME, data={"score": round(score, 4)})

    def _publish_unmatched(self, bib: Bibliography) -> None:
        """Hints on the .bib entries that no paper of the index matches."""
        if not bib.exists:
            return
        lines = bib.text.split("\n")
        starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))

        def position(offset: int) -> types.Position:
            line = max(0, next(i for i, start in enumerate(starts) if start > offset) - 1)
            return self.workspace.position_codec.position_to_client_units(
                lines, types.Position(line, offset - starts[line]))

        found = [types.Diagnostic(types.Range(position(entry.start), position(entry.end)),
                                  f"{entry.key}: no paper in the index matches this entry.",
                                  severity=types.DiagnosticSeverity.Hint, code=UNMATCHED_CODE, source=NAME)
                 for entry in bib.entries.values() if entry.paper_id is None]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(from_fs_path(str(bib.path)), found))

    # ------------------------------------------------------------------ code actions

    async def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        """For an uncited claim: cite one of the ACTION_K top papers for it at the sentence's end (and add its
        entry to the .bib), each one workspace edit."""
        claims = [d for d in params.context.diagnostics if d.source == NAME and d.code == CLAIM_CODE]
        if not claims:
            return None
        document = self.workspace.get_text_document(params.text_document.uri)
        text, kind = document.source, self._kind(document)
        bibs = await self._run(self._bibliographies, document)
        cited = self._cited(text, kind, bibs)
        actions = []
        for diagnostic in claims:
            end = document.offset_at_position(diagnostic.range.end)
            at = end - 1 if text[end - 1:end] in (".", "!", "?", ";", ":") else end
            query = citation_query(text, at, k=ACTION_K, exclude=cited)
            try:
                result = await self._newest_only(("action", document.uri), self._recommend, query)
            except Superseded:
                return None
            actions += self._cite_actions(document, kind, bibs, diagnostic, at, result)
        return actions

    def _cite_actions(self, document: TextDocument, kind: str, bibs: list[Bibliography], diagnostic: types.Diagnostic,
                      at: int, result: RecommendResult) -> list[types.CodeAction]:
        target = bibs[0] if bibs else None
        here = document.client_position_at_offset(at)
        actions, taken = [], set()
        for paper in result.papers:
            key = next((k for bib in bibs if (k := bib.key_of(paper.id))), None)
            edit = types.WorkspaceEdit()
            if key is None:
                key = target.new_key(paper, taken) if target else citation_keys([paper])[0]
                if target is not None:
                    self._append(edit, target, paper, key)
            taken.add(key)
            change = types.TextEdit(types.Range(here, here), f"~\\cite{{{key}}}" if kind == "latex" else f" [@{key}]")
            if edit.document_changes:
                edit.document_changes.insert(0, types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(
                    uri=document.uri, version=document.version), [change]))
            else:
                edit.changes = {document.uri: [change], **(edit.changes or {})}
            actions.append(types.CodeAction(f"Cite “{_short(paper.title, 70)}” ({byline(paper)})",
                                            kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic], edit=edit))
        return actions


def _handler(method):
    """A bound coroutine method as pygls registers handlers (a function of its own, the method's signature)."""
    @functools.wraps(method)
    async def handler(*args):
        return await method(*args)
    return handler


# ---------------------------------------------------------------------- what the editor shows


def byline(paper: Paper) -> str:
    """"First author et al., year, venue"."""
    first = paper.authors[0] if paper.authors else "Anonymous"
    parts = [first + (" et al." if len(paper.authors) > 1 else ""), str(paper.year or "n.d.")]
    return ", ".join(parts + ([_short(paper.venue, 50)] if paper.venue else []))


def citing_sentence(text: str, site: CitationSite) -> str:
    """The sentence that holds the citation at `site`, as the engine reads it (the citation left out)."""
    context = citation_query(text, site.citation.start).context
    here = next((sentence for _, _, sentence in split_sentences(context) if CITATION_MARK in sentence), context)
    return Query(context=here).context_text


def card(paper: Paper) -> str:
    """The paper card (Markdown): title, authors, year, venue, DOI."""
    authors = ", ".join(paper.authors[:6]) + (" et al." if len(paper.authors) > 6 else "")
    facts = " · ".join(_md(part) for part in (authors, str(paper.year or ""), paper.venue) if part)
    doi = f"\n\n[doi:{_md(paper.doi)}](https://doi.org/{paper.doi})" if paper.doi else ""
    return f"**{_md(paper.title)}**\n\n{facts}{doi}"


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _md(text: str) -> str:
    """Corpus text shown as Markdown: its syntax characters escaped."""
    return "".join("\\" + ch if ch in "\\`*_{}[]<>()#+!|~" else ch for ch in " ".join(str(text).split()))


def serve_stdio(index: str | Path, backend: str | None = None) -> int:
    """Load the index, then answer over stdin/stdout until the client exits. Whatever else writes to standard
    output while the server runs (a library's print, a native warning) goes to stderr: stdout carries the
    protocol alone."""
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    print(f"{NAME}: loading {index}", file=sys.stderr)
    server = CitationServer(Recommender.load(index, backend))
    server.recommender.encode(["warm up"])
    print(f"{NAME}: ready", file=sys.stderr)
    server.start_io(sys.stdin.buffer, protocol_out)
    return 0
