"""Evaluation: how well each method finds the papers a query should cite. Runs `python -m recommender evaluate` on
this corpus in the background (`workspace.evaluation_jobs`), on the corpus's own citation links or an uploaded query
file, or reads a metrics file (`evaluate --json`, the benchmarks' `bench/results/*.json`)."""
from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import streamlit as st

from pages.ui import access, active_index, engines, markdown, shelves
from pages.ui.server_paths import without_paths
from recommender.background import Job, JobBusy
from recommender.evaluation.queries import citing_positions
from recommender.evaluation.results import Table, TooLarge, metric_tables
from workspace import evaluation_jobs

POLL_S = 1.0  # how often the runs are redrawn while one runs
MODES = {"run": "Run an evaluation", "file": "Load a metrics file"}
SUMMARY = {"mrr": "MRR", "map": "MAP", "ndcg@10": "nDCG@10"}
CURVES = {"recall": "Recall@k", "precision": "Precision@k", "f1": "F1@k"}
STATE_TEXT = {"running": "running", "done": "done", "failed": "failed", "stopped": "stopped",
              "interrupted": "interrupted", "created": "not started", "starting": "starting"}
MAX_METRICS_FILE_BYTES = 20 * 2**20  # a metrics file uploaded (the benchmarks' largest is well under 1 MB)
_AT_RE = re.compile(r"^(recall|precision|f1)@(\d+)$")


def column_order(metric: str) -> tuple:
    """Summary metrics first, then each @k family by increasing k, then the rest."""
    match = _AT_RE.match(metric)
    if metric in SUMMARY:
        return (0, list(SUMMARY).index(metric), 0)
    return (1, match.group(1), int(match.group(2))) if match else (2, metric, 0)


def summary_chart(table: Table) -> go.Figure:
    shown = [k for k in SUMMARY if any(k in m for m in table.values())]
    fig = go.Figure([go.Bar(name=name, x=[SUMMARY[k] for k in shown], y=[m.get(k) for k in shown],
                            text=[f"{m[k]:.3f}" if k in m else "" for k in shown], textposition="auto")
                     for name, m in table.items()])
    fig.update_layout(barmode="group", height=380, margin=dict(l=10, r=10, t=30, b=10), yaxis_title="score",
                      yaxis_range=[0, 1], legend_title="method")
    return fig


def curve(metrics: dict[str, float], family: str) -> list[tuple[int, float]]:
    return sorted((int(m.group(2)), v) for k, v in metrics.items() if (m := _AT_RE.match(k)) and m.group(1) == family)


def curve_chart(table: Table, family: str) -> go.Figure:
    fig = go.Figure()
    for name, metrics in table.items():
        if points := curve(metrics, family):
            fig.add_trace(go.Scatter(x=[k for k, _ in points], y=[v for _, v in points], name=name,
                                     mode="lines+markers"))
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=30, b=10), xaxis_type="log", xaxis_title="k",
                      yaxis_title=CURVES[family], yaxis_range=[0, 1], legend_title="method")
    return fig


def show_table(table: Table, key: str) -> None:
    """Charts of the summary metrics and of the metrics at cut-off k, and every number in a table."""
    if any(k in m for m in table.values() for k in SUMMARY):
        st.markdown("**Ranking quality**")
        st.plotly_chart(summary_chart(table), key=f"{key}_summary")
    families = [f for f in CURVES if any(curve(m, f) for m in table.values())]
    if families:
        st.markdown("**Metrics at cut-off k**")
        for tab, family in zip(st.tabs([CURVES[f] for f in families]), families):
            tab.plotly_chart(curve_chart(table, family), key=f"{key}_curve_{family}")
    columns = sorted({k for m in table.values() for k in m}, key=column_order)
    st.dataframe({"method": list(table), **{k: [m.get(k) for m in table.values()] for k in columns}},
                 hide_index=True, key=f"{key}_table")


# --------------------------------------------------------------------------- running an evaluation


def run_panel() -> None:
    directory = active_index.active_index_dir()
    index = engines.index(directory)
    shelf = shelves.shelf()
    if error := st.session_state.pop("eval_error", None):
        st.error(markdown.plain(without_paths(error)))
    start_form(shelf, directory, index)
    runs = evaluation_jobs.runs(shelf)
    if runs:
        st.subheader("Runs")
        st.fragment(show_runs, run_every=POLL_S if any(job.running() for job in runs) else None)(shelf)
        show_results(runs)


def start_form(shelf, directory: str, index) -> None:
    demo = active_index.corpus_name(directory) == "Demo corpus"
    citing = evaluation_jobs.citing_papers(index)
    total = len(citing_positions(index))
    own = (f"Demo query set: the {len(citing)} papers of the demo corpus that cite others in it" if demo else
           f"This corpus's citation links: {len(citing):,} of its papers that cite others in it"
           + (f" (drawn at random from {total:,})" if total > len(citing) else ""))
    sets = {"corpus": own + ", each asking with its title, abstract and authors for the papers it cites",
            "file": "A query file (JSONL) of yours"}
    if not citing:
        del sets["corpus"]
    st.caption(f"Compares methods on {markdown.plain(active_index.corpus_name(directory))}: each query asks for the "
               "papers it should cite, and each method is scored by where it ranks them.")
    choice = st.radio("Query set", list(sets), format_func=sets.get, key="eval_set")
    upload = None
    if choice == "file":
        upload = st.file_uploader("Query file", type=["jsonl", "gz"], key="eval_queries",
                                  help="One JSON object a line: qid, relevant (the ids of the papers it should find), "
                                       "and a context with [CIT] and/or citing_title and citing_abstract; citing_id "
                                       "(left out of its answers). The format of `python -m recommender evaluate "
                                       "--queries`.")
    available = evaluation_jobs.available_methods(directory)
    methods = st.multiselect("Methods", available, default=[m for m in ("bm25", "full") if m in available],
                             key="eval_methods", help="The named methods of `python -m recommender evaluate` "
                                                      "(recommender/config.py); those that need `train` are offered "
                                                      "once the corpus has learned models.")
    if not st.button("Run the evaluation", type="primary", icon=":material/play_arrow:", key="eval_run"):
        st.caption("It runs on the server in the background: you may leave this page and come back to its address.")
        return
    try:
        if choice == "file":
            if upload is None:
                raise ValueError("Choose a query file first.")
            lines = evaluation_jobs.query_file_lines(upload.name, upload.getvalue())
            count = evaluation_jobs.count_queries(lines, set(index.ids), upload.name)
            evaluation_jobs.start(shelf, directory, methods, upload.name, query_lines=lines, queries=count,
                                  keep_fresh=not shelves.shared())
        else:
            label = "the demo query set" if demo else "the corpus's own citation links"
            evaluation_jobs.start(shelf, directory, methods, label, citing=citing, keep_fresh=not shelves.shared())
    except (ValueError, OSError) as exc:
        st.error(f"The evaluation was not started: {markdown.plain(without_paths(str(exc)))}")
        return
    st.session_state.pop("eval_shown", None)  # the new run's results once it is done
    st.rerun()  # app.py puts the workspace, which now exists, in the address


def show_runs(shelf) -> None:
    """Each run with its state and progress; redrawn every POLL_S seconds while one runs."""
    seen = st.session_state.setdefault("eval_states", {})
    changed = False
    runs = evaluation_jobs.runs(shelf)
    shown = shown_run(runs)
    for job in runs:
        status = job.status()
        state = status.get("state", "created")
        changed |= seen.get(job.folder.name, state) != state
        seen[job.folder.name] = state
        with st.container(border=True, key=f"eval_run_{job.folder.name}"):
            show_run(job, status, job is shown)
    if changed:  # the whole page: the results appear, and polling starts or stops
        st.rerun()


def show_run(job: Job, status: dict, shown: bool) -> None:
    state, info, key = status.get("state", "created"), job.spec().get("info", {}), job.folder.name
    started = str(job.spec().get("created", ""))[:16].replace("T", " ")
    st.markdown(f"**{markdown.plain(job.name)}** · {info.get('queries', 0):,} queries · started {started} UTC · "
                f"{STATE_TEXT.get(state, state)}")
    if state in ("running", "starting", "created"):
        fraction, text = evaluation_jobs.progress(status)
        st.progress(fraction, text=markdown.plain(text))
        st.button("Stop", key=f"eval_stop_{key}", icon=":material/stop:", on_click=job.stop)
        return
    if state == "failed":
        st.error(f"The evaluation failed: {markdown.plain(without_paths(str(status.get('message') or '')))}")
    elif state in ("stopped", "interrupted"):
        why = "was stopped" if state == "stopped" else "ended before it was done (the server restarted?)"
        st.warning(f"The evaluation {why}; the methods it finished are kept. Resume it to run the others.")
    buttons = st.container(horizontal=True)
    if state == "done" and not shown and buttons.button("Show the results", key=f"eval_show_{key}"):
        st.session_state["eval_shown"] = key
        st.rerun()
    if state != "done" and buttons.button("Resume", key=f"eval_resume_{key}", icon=":material/play_arrow:"):
        act(lambda: evaluation_jobs.resume(job))
    if buttons.button("Remove", key=f"eval_remove_{key}", icon=":material/delete:"):
        act(job.remove)
    if state == "failed" and (log := job.log_tail(30)):
        with st.expander("Log"):
            st.code(without_paths(log), language=None)


def act(action) -> None:
    """Resume or remove a run, then redraw the page (saying what refused it, if anything did)."""
    try:
        action()
    except (JobBusy, ValueError, OSError) as exc:
        st.session_state["eval_error"] = str(exc)
    st.rerun()


def shown_run(runs: list[Job]) -> Job | None:
    """The run chosen with "Show the results", else the newest finished one."""
    done = [job for job in runs if job.state() == "done"]
    chosen = next((job for job in done if job.folder.name == st.session_state.get("eval_shown")), None)
    return chosen or (done[0] if done else None)


def show_results(runs: list[Job]) -> None:
    """The metrics of the run shown, with a download of its `evaluate --json` file."""
    job = shown_run(runs)
    table = evaluation_jobs.metrics(job) if job else {}
    if not table:
        return
    st.subheader("Results")
    st.caption(markdown.plain(job.name))
    st.download_button("Download the metrics (JSON)", json.dumps(table, indent=1), key="eval_download",
                       file_name=f"evaluation-{job.folder.name}.json", mime="application/json",
                       icon=":material/download:")
    show_table(table, "run")


# --------------------------------------------------------------------------- a metrics file


def file_panel() -> None:
    upload = st.file_uploader("Metrics JSON", type=["json"], key="eval_file")
    if upload is None:
        st.info("Upload a metrics file to compare the methods it holds: `python -m recommender evaluate ... --json "
                "FILE` writes one, this page's runs download one, and the benchmarks write theirs to "
                "bench/results/.", icon="📈")
        return
    if upload.size > MAX_METRICS_FILE_BYTES:
        st.error(f"{markdown.plain(upload.name)} is too large: {upload.size / 2**20:,.1f} MB; metrics files of up to "
                 f"{MAX_METRICS_FILE_BYTES // 2**20} MB are read.")
        return
    try:
        tables = metric_tables(json.loads(upload.getvalue().decode("utf-8")))
    except TooLarge as exc:
        st.error(f"{markdown.plain(upload.name)} is too large: {exc}.")
        return
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError, or an integer of over 4,300 digits
        st.error(f"{markdown.plain(upload.name)} is not a JSON file: {markdown.plain(str(exc))}")
        return
    except RecursionError:
        st.error(f"{markdown.plain(upload.name)} is nested too deeply to be read (deeper than Python's recursion "
                 "limit).")
        return
    if not tables:
        st.error(f"{markdown.plain(upload.name)} holds no method metrics: no table of methods with MRR, MAP, nDCG@k "
                 "or recall@k, such as `evaluate --json` writes ({\"bm25\": {\"mrr\": …, \"ndcg@10\": …}, …}).")
        return
    name = next(iter(tables))
    if len(tables) > 1:
        name = st.selectbox(f"Tables in {markdown.plain(upload.name)}", list(tables),
                            format_func=lambda n: n or "all methods", key="eval_table")
    show_table(tables[name], "file")


access.require()
st.title("Evaluation")
mode = st.segmented_control("What to compare", list(MODES), format_func=MODES.get, default="run", key="eval_mode",
                            required=True, label_visibility="collapsed")
if mode == "file":
    file_panel()
else:
    run_panel()
