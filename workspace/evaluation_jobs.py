"""Evaluations in the background: `python -m recommender evaluate` on a corpus, one step per method, as a job
(`recommender.background`) in a shelf's `.evaluations/<run>/` folder, beside the shelf's builds.

The query set is the corpus's own citation links (its papers that cite others in it, each asking with its title,
abstract and authors for the papers it cites; for the demo corpus all 123 of them) or a query file someone
uploaded. The job's folder also holds the query set and each method's metrics (`metrics-N.json`, as
`evaluate --json` writes them); `metrics` joins them into one `evaluate --json` table.

Anyone who reaches the app may start runs, so each is bounded: a query file's bytes and queries, the runs of a
shelf at a time and kept, and the runs of the whole server at a time (the MAX_ constants); each refusal says which.
"""
from __future__ import annotations

import gzip
import io
import json
import secrets
import tempfile
import time
from pathlib import Path

from recommender.background import Job, Step
from recommender.config import METHODS
from recommender.evaluation.queries import citing_positions, queries_from_file
from recommender.pipeline.learned import head_path, model_path
from workspace import corpora

FOLDER = ".evaluations"
CITING_SPLIT = "citing"
CORPUS_LIMIT = 300  # a corpus's own citation links: at most this many of its citing papers, drawn at random
MAX_QUERY_FILE_BYTES = 50 * 1024 * 1024  # a query file, read (unpacked when gzipped); kept with its run
MAX_FILE_QUERIES = 5000  # queries of an uploaded file: each method answers each of them
MAX_RUNNING_PER_SHELF = 1  # runs of one workspace (or of the shared shelf) at a time
MAX_RUNNING = 4  # runs on the whole server at a time: each loads the corpus and the models in a process
MAX_RUNS_KEPT = 20  # runs a shelf keeps (with their query files); older ones are removed by hand
QUERY_FORMAT = ("expected one JSON object a line with qid, relevant (the ids it should find) and a context or "
                "citing_title and citing_abstract")


def available_methods(index_dir: str | Path) -> list[str]:
    """The methods `evaluate` can run on the index: those needing a learned model only when it has one."""
    head = head_path(index_dir).is_file()
    reranker = model_path(index_dir).is_file() or model_path(index_dir, local=True).is_file()
    return [name for name, c in METHODS.items() if (reranker or not c.rerank) and (head or c.tuned != "on")]


def citing_papers(index, limit: int = CORPUS_LIMIT) -> list[str]:
    """Ids of the papers that query the corpus with its own citation links (`citing_positions`)."""
    return [index.ids[p] for p in citing_positions(index, limit)]


def query_file_lines(name: str, data: bytes) -> bytes:
    """An uploaded query file's JSONL text (gzipped files unpacked, up to MAX_QUERY_FILE_BYTES)."""
    if name.endswith(".gz") or data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as handle:
                data = handle.read(MAX_QUERY_FILE_BYTES + 1)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{name} is not a readable gzip file ({exc}).") from None
    if len(data) > MAX_QUERY_FILE_BYTES:
        raise ValueError(f"{name} is larger than {MAX_QUERY_FILE_BYTES // 2**20} MB unpacked.")
    return data


def count_queries(lines: bytes, index_ids: set[str], name: str = "the file") -> int:
    """How many queries of a query file (JSONL: qid, relevant, citing_title, citing_abstract, context,
    citing_id) ask for papers of the index; ValueError saying what is wrong with it (or that it holds more than
    MAX_FILE_QUERIES queries)."""
    given = 0
    for line in io.BytesIO(lines):
        given += bool(line.strip())
        if given > MAX_FILE_QUERIES:
            raise ValueError(f"{name} holds more than {MAX_FILE_QUERIES:,} queries; up to {MAX_FILE_QUERIES:,} "
                             "are run at a time: split it into several files.")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "queries.jsonl"
        path.write_bytes(lines)
        try:
            queries = queries_from_file(path, index_ids)
        except KeyError as exc:
            raise ValueError(f"{name} is not a query file: a query has no {exc}; {QUERY_FORMAT}") from None
        except (TypeError, AttributeError):
            raise ValueError(f"{name} is not a query file: a line is not a JSON object; {QUERY_FORMAT}") from None
        except ValueError as exc:
            raise ValueError(f"{name} is not a query file ({exc}); {QUERY_FORMAT}") from None
        except RecursionError:
            raise ValueError(f"{name} is not a query file: a line is nested too deeply to be read; "
                             f"{QUERY_FORMAT}") from None
    if not queries:
        raise ValueError(f"None of the queries in {name} asks for a paper of this corpus (their `relevant` ids).")
    return len(queries)


def start(shelf: Path, index_dir: str | Path, methods: list[str], label: str, *, citing: list[str] | None = None,
          query_lines: bytes | None = None, queries: int = 0, keep_fresh: bool = False) -> Job:
    """Start evaluating `methods` on the index in the background, on the papers `citing` (a corpus's own citation
    links) or on a query file's `query_lines`; `label` and `queries` (their number) say what the set is.
    `keep_fresh`: keep the shelf's modification time fresh while it runs (a private shelf)."""
    if not methods:
        raise ValueError("Choose at least one method.")
    if (citing is None) == (query_lines is None):
        raise ValueError("give either the citing papers or a query file")
    unknown = sorted(set(methods) - set(METHODS))
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {sorted(METHODS)}")
    check_room(shelf)
    if len(runs(shelf)) >= MAX_RUNS_KEPT:
        raise ValueError(f"This workspace keeps {MAX_RUNS_KEPT} runs already, the most it keeps: remove some below.")
    folder = shelf / FOLDER / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    if citing is not None:
        query_file, query_args = folder / "queries.json", ["--split", f"{folder / 'queries.json'}:{CITING_SPLIT}"]
        content, queries = json.dumps({CITING_SPLIT: citing}).encode("utf-8"), queries or len(citing)
    else:
        query_file, content = folder / "queries.jsonl", query_lines
        query_args = ["--queries", str(query_file)]
    outputs = [str(folder / f"metrics-{number}.json") for number in range(len(methods))]
    steps = [Step(method, ["evaluate", "--index", str(Path(index_dir).resolve()), *query_args, "--methods", method,
                           "--json", output], creates=output) for method, output in zip(methods, outputs)]
    job = Job.create(folder, f"{', '.join(methods)} on {label}", steps, touch=[str(shelf)] if keep_fresh else [],
                     info={"index": str(index_dir), "query_set": label, "queries": queries, "methods": methods,
                           "outputs": outputs})
    query_file.write_bytes(content)
    job.start()
    return job


def check_room(shelf: Path) -> None:
    """ValueError when `shelf` runs MAX_RUNNING_PER_SHELF evaluations already, or the server MAX_RUNNING; a new
    private shelf also needs room among the workspaces (`corpora.check_new_shelf`)."""
    if sum(job.running() for job in runs(shelf)) >= MAX_RUNNING_PER_SHELF:
        raise ValueError(f"{MAX_RUNNING_PER_SHELF} evaluation of this workspace runs already, the most at a time: "
                         "wait until it ends or stop it.")
    root = corpora.corpora_root()
    shelves = [root, *sorted((root / corpora.PRIVATE_FOLDER).glob("*"))]
    if sum(job.running() for other in shelves for job in runs(other)) >= MAX_RUNNING:
        raise ValueError(f"{MAX_RUNNING} evaluations run on this server already, the most at a time: try again "
                         "when one has ended.")
    corpora.check_new_shelf(shelf)


def resume(job: Job) -> None:
    """Resume a stopped or interrupted run, when its shelf and the server have room for it."""
    check_room(job.folder.parent.parent)
    job.start()


def runs(shelf: Path) -> list[Job]:
    """The evaluations of a shelf, the newest first."""
    folder = shelf / FOLDER
    if not folder.is_dir():
        return []
    return [Job(p) for p in sorted(folder.iterdir(), reverse=True) if (p / "job.json").is_file()]


def progress(status: dict) -> tuple[float, str]:
    """The whole run's progress (0..1) and what it is doing, from a job's status."""
    if not status.get("step") or not status.get("steps"):
        return 0.0, "starting"
    step, steps, method = status["step"], status["steps"], status.get("label", "")
    current = status.get("progress") or {}
    if str(current.get("text", "")).startswith(f"{method}:"):  # the method's own bar, not the model loader's
        fraction, doing = current.get("fraction") or 0.0, current["text"]
    else:
        fraction, doing = 0.0, f"{method}: loading the index and the models"
    return min(1.0, (step - 1 + fraction) / steps), f"method {step} of {steps} · {doing}"


def metrics(job: Job) -> dict[str, dict[str, float]]:
    """The metrics of the methods finished so far, as one `evaluate --json` table (method -> metric -> value)."""
    joined = {}
    for output in job.spec().get("info", {}).get("outputs", []):
        try:
            joined.update(json.loads(Path(output).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return joined
