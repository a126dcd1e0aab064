"""A seed set of papers from the Semantic Scholar Graph API, with their references and citations one hop out.

Plain `requests` against the documented endpoints (`POST /graph/v1/paper/batch`, `GET
/graph/v1/paper/{id}/citations`) rather than the `semanticscholar` package: its 0.12 client answers a 502/503
with an empty result instead of an error (pages of references would vanish silently), waits at least 5 s
before any retry, and configures the root logger. Requests are spaced to one a second (the API's rate for a
key; without `S2_API_KEY` the shared pool is slower still) and retried on 429/5xx.

Ids are Semantic Scholar corpus ids written as the API spells them ("CorpusId:215416146"), the same ids the
bulk Datasets use, so corpora from both can be merged. Stages, each resumable from the `.partial` file:
`seed` (the given ids, 500 a request), `refs` (the papers the seeds reference), `cites` (the papers citing
each seed, up to the API's 10,000 a paper).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable, Iterator


from recommender.corpus.identifiers import normalize_doi
from recommender.corpus.sources.corpus_file import ReferenceCount, Summary, within_corpus, write_corpus
from recommender.corpus.sources.errors import SourceError
from recommender.corpus.sources.partial import PartialDownload, run_stages
from recommender.corpus.sources.web import JsonClient

API_URL = "https://api.semanticscholar.org"
BATCH = 500  # ids per batch request, the API's maximum
CITATION_PAGE = 1000
CITATION_WINDOW = 10_000  # the API lists at most this many citations of a paper
FIELDS = ("paperId", "corpusId", "externalIds", "url", "title", "abstract", "venue", "year", "publicationDate",
          "authors", "references.paperId")
EXPANSIONS = ("none", "refs", "cites", "both")
_PREFIXED_RE = re.compile(r"^(CorpusId|DOI|ARXIV|MAG|ACL|PMID|PMCID|URL):\S+$", re.IGNORECASE)
_SHA_RE = re.compile(r"^[0-9a-f]{40}$", re.IGNORECASE)
_ARXIV_RE = re.compile(r"^(?:arxiv:)?(\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)$", re.IGNORECASE)
_DOI_RE = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)?(10\.\d{4,9}/\S+)$", re.IGNORECASE)
_MAX_LISTED = 5


def seed_id(value: str) -> str:
    """A paper id in a form the Graph API accepts: S2 paper id, CorpusId:, DOI:, ARXIV:, MAG:, ACL:, PMID:, ..."""
    text = value.strip()
    if _SHA_RE.match(text):
        return text.lower()
    arxiv = _ARXIV_RE.match(text)
    if arxiv:
        return f"ARXIV:{arxiv.group(1)}"
    doi = _DOI_RE.match(text)
    if doi:
        return f"DOI:{normalize_doi(doi.group(1))}"
    if _PREFIXED_RE.match(text):
        return text
    raise SourceError(f"{value!r} is not a paper id Semantic Scholar knows (a DOI, an arXiv id, CorpusId:N, "
                      "a 40-character S2 paper id, or MAG:, ACL:, PMID:, PMCID:, URL: ids)")


def paper_record(paper: Any) -> dict[str, Any] | None:
    """A Graph API paper as a corpus record; None without a corpus id or without title and abstract.

    References hold S2 paper ids (what `references.paperId` gives) until the corpus is written: then they
    become corpus ids, for the papers the corpus holds.
    """
    if not isinstance(paper, dict) or not isinstance(paper.get("corpusId"), int):
        return None
    title = " ".join(str(paper.get("title") or "").split())
    abstract = " ".join(str(paper.get("abstract") or "").split())
    if not (title or abstract):
        return None
    references = [r["paperId"] for r in paper.get("references") or []
                  if isinstance(r, dict) and isinstance(r.get("paperId"), str)]
    return corpus_record(paper, paper["corpusId"], title=title, abstract=abstract,
                         venue=paper.get("venue") if isinstance(paper.get("venue"), str) else "",
                         references=references, extra={"s2": paper.get("paperId") or ""},
                         external_ids=paper.get("externalIds"), date_field="publicationDate")


def corpus_record(paper: dict[str, Any], corpus_id: int, *, title: str, abstract: str, venue: str,
                  references: list[str], external_ids: Any, date_field: str,
                  extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A Semantic Scholar paper (Graph API or Datasets row) as a corpus record: the fields both spell alike
    (authors, year, url) read here, the identifiers from `external_ids` (DOI normalised, arXiv id) and the date
    from `date_field`, which the two spell differently; `extra` fields follow `references`."""
    record: dict[str, Any] = {
        "id": f"CorpusId:{corpus_id}",
        "title": title,
        "abstract": abstract,
        "authors": [a["name"].strip() for a in paper.get("authors") or []
                    if isinstance(a, dict) and isinstance(a.get("name"), str) and a["name"].strip()],
        "year": paper.get("year") if isinstance(paper.get("year"), int) else None,
        "venue": venue,
        "references": references,
        **(extra or {}),
    }
    external = external_ids if isinstance(external_ids, dict) else {}
    if external.get("DOI"):
        record["doi"] = normalize_doi(str(external["DOI"]))
    if external.get("ArXiv"):
        record["arxiv"] = str(external["ArXiv"])
    for name, key in ((date_field, "date"), ("url", "url")):
        if paper.get(name):
            record[key] = paper[name]
    return record


class SemanticScholarDownload:
    """One seed-set download; `run()` starts it or continues an interrupted one from its `.partial` file."""

    def __init__(self, seeds: Iterable[str], out: str | Path, *, expand: str = "none", expand_limit: int | None = None,
                 api_key: str | None = None, api_url: str = API_URL, client: JsonClient | None = None,
                 progress: bool = True, citation_page: int = CITATION_PAGE):
        self.seeds = list(dict.fromkeys(seed_id(s) for s in seeds))
        if not self.seeds:
            raise SourceError("give the seed papers: --seed ID ... or --seed-file FILE (one id a line)")
        if expand not in EXPANSIONS:
            raise SourceError(f"--expand {expand!r}: choose one of {', '.join(EXPANSIONS)}")
        if expand_limit is not None and expand_limit < 1:
            raise SourceError("--expand-limit must be at least 1")
        self.out, self.expand, self.expand_limit = Path(out), expand, expand_limit
        self.api_url = api_url.rstrip("/")
        key = api_key if api_key is not None else os.environ.get("S2_API_KEY", "")
        self.client = client or JsonClient("Semantic Scholar", per_second=1.0,
                                           headers={"x-api-key": key} if key else {})
        self.progress = progress
        self.citation_page = citation_page
        self.notes: list[str] = []
        self._wanted_refs: list[str] | None = None
        self._seed_papers: list[str] | None = None

    def settings(self) -> dict[str, Any]:
        return {"source": "semantic-scholar", "seeds": self.seeds, "expand": self.expand,
                "expand_limit": self.expand_limit}

    def run(self) -> Summary:
        partial = PartialDownload(self.out, self.settings())
        state = partial.open() or {"stage": "seed", "batch": 0}
        stages = {"seed": self._seed_batch, "refs": self._refs_batch, "cites": self._cites_page}
        return run_stages(partial, state, stages,
                          "Semantic Scholar papers", self.progress, self._finish)

    # ------------------------------------------------------------------ stages

    def _seed_batch(self, partial: PartialDownload, state: dict) -> dict:
        start = state["batch"] * BATCH
        ids = self.seeds[start:start + BATCH]
        papers = self._lookup(ids)
        missing = [i for i, paper in zip(ids, papers) if paper is None]
        if missing:
            self.notes.append(f"{len(missing)} seed ids were not found: {', '.join(missing[:_MAX_LISTED])}"
                              + (", ..." if len(missing) > _MAX_LISTED else ""))
        following = {"stage": "seed", "batch": state["batch"] + 1}
        if start + BATCH >= len(self.seeds):
            following = {"stage": "refs", "batch": 0} if self.expand in ("refs", "both") else self._after_refs()
        partial.save(self._records(papers), "seed", following)
        return following

    def _after_refs(self) -> dict:
        return {"stage": "cites", "seed": 0, "offset": 0} if self.expand in ("cites", "both") else {"stage": "done"}

    def _refs_batch(self, partial: PartialDownload, state: dict) -> dict:
        if self._wanted_refs is None:  # the same list on every run: the seeds' references outside the seed set
            seeds = list(partial.records("seed"))
            self._wanted_refs = sorted({ref for r in seeds for ref in r["references"]} - {r["s2"] for r in seeds})
        start = state["batch"] * BATCH
        ids = self._wanted_refs[start:start + BATCH]
        if not ids or partial.expansion_full(self.expand_limit, self.notes):
            partial.save([], "ref", self._after_refs())
            return self._after_refs()
        following = {"stage": "refs", "batch": state["batch"] + 1}
        partial.save(partial.expansion_room(self._records(self._lookup(ids)), self.expand_limit), "ref", following)
        return following

    def _cites_page(self, partial: PartialDownload, state: dict) -> dict:
        if self._seed_papers is None:
            self._seed_papers = [r["id"] for r in partial.records("seed")]
        if state["seed"] >= len(self._seed_papers) or partial.expansion_full(self.expand_limit, self.notes):
            partial.save([], "cite", {"stage": "done"})
            return {"stage": "done"}
        paper = self._seed_papers[state["seed"]]
        limit = min(self.citation_page, CITATION_WINDOW - state["offset"])
        page = self.client.get(f"{self.api_url}/graph/v1/paper/{paper}/citations",
                               params={"fields": "paperId", "offset": state["offset"], "limit": limit})
        if not isinstance(page, dict) or not isinstance(page.get("data"), list):
            raise SourceError("Semantic Scholar answered a citations request without `data`: is --api-url right?")
        citing = [c["citingPaper"]["paperId"] for c in page["data"] if isinstance(c, dict)
                  and isinstance(c.get("citingPaper"), dict) and isinstance(c["citingPaper"].get("paperId"), str)]
        citing = [i for i in dict.fromkeys(citing)]
        records: list[dict] = []
        for start in range(0, len(citing), BATCH):
            records += self._records(self._lookup(citing[start:start + BATCH]))
        following = {"stage": "cites", "seed": state["seed"] + 1, "offset": 0}
        following_offset = page.get("next")
        if isinstance(following_offset, int) and following_offset > state["offset"]:
            if following_offset < CITATION_WINDOW:
                following = {"stage": "cites", "seed": state["seed"], "offset": following_offset}
            else:
                self.notes.append(f"{paper}: only its first {CITATION_WINDOW} citations were fetched (the API's limit)")
        partial.save(partial.expansion_room(records, self.expand_limit), "cite", following)
        return following

    # ------------------------------------------------------------------ requests and the result

    def _lookup(self, ids: list[str]) -> list[Any]:
        answer = self.client.post(f"{self.api_url}/graph/v1/paper/batch", {"ids": ids},
                                  params={"fields": ",".join(FIELDS)})
        if not isinstance(answer, list) or len(answer) != len(ids):
            raise SourceError("Semantic Scholar answered a batch request with something other than one entry per id")
        return answer

    @staticmethod
    def _records(papers: list[Any]) -> list[dict]:
        return [r for r in map(paper_record, papers) if r is not None]

    def _finish(self, partial: PartialDownload) -> Summary:
        corpus_ids = {r["s2"]: r["id"] for r in partial.records() if r["s2"]}
        count = ReferenceCount()
        written = write_corpus(within_corpus(_with_corpus_ids(partial.records(), corpus_ids), partial.seen, count),
                               self.out)
        partial.remove()
        return Summary(str(self.out), written, count, partial.parts(), self.notes)


def _with_corpus_ids(records: Iterator[dict], corpus_ids: dict[str, str]) -> Iterator[dict]:
    """References as corpus ids; S2 paper ids of papers outside the corpus are kept (and counted as outside)."""
    for record in records:
        yield {**record, "references": [corpus_ids.get(ref, ref) for ref in record["references"]]}
