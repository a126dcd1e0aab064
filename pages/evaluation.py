"""Evaluation: compare the methods of a `python -m recommender evaluate --json FILE` run."""
from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import streamlit as st

from pages.ui import access

SUMMARY = {"mrr": "MRR", "map": "MAP", "ndcg@10": "nDCG@10"}
CURVES = {"recall": "Recall@k", "precision": "Precision@k", "f1": "F1@k"}
_AT_RE = re.compile(r"^(recall|precision|f1)@(\d+)$")


def methods_of(data: object) -> dict[str, dict[str, float]]:
    """{method: {metric: value}} with the numeric metrics only; other keys are ignored."""
    if not isinstance(data, dict):
        return {}
    found = {}
    for name, metrics in data.items():
        if isinstance(metrics, dict):
            numeric = {k: float(v) for k, v in metrics.items()
                       if isinstance(v, (int, float)) and not isinstance(v, bool)}
            if numeric:
                found[str(name)] = numeric
    return found


def column_order(metric: str) -> tuple:
    """Summary metrics first, then each @k family by increasing k, then the rest."""
    match = _AT_RE.match(metric)
    if metric in SUMMARY:
        return (0, list(SUMMARY).index(metric), 0)
    return (1, match.group(1), int(match.group(2))) if match else (2, metric, 0)


def summary_chart(methods: dict[str, dict[str, float]]) -> go.Figure:
    fig = go.Figure([go.Bar(name=name, x=list(SUMMARY.values()), y=[m.get(k) for k in SUMMARY],
                            text=[f"{m[k]:.3f}" if k in m else "" for k in SUMMARY], textposition="outside")
                     for name, m in methods.items()])
    fig.update_layout(barmode="group", height=380, margin=dict(l=10, r=10, t=30, b=10), yaxis_title="score",
                      legend_title="method")
    return fig


def curve_chart(methods: dict[str, dict[str, float]], family: str) -> go.Figure:
    fig = go.Figure()
    for name, metrics in methods.items():
        points = sorted((int(m.group(2)), v) for k, v in metrics.items()
                        if (m := _AT_RE.match(k)) and m.group(1) == family)
        if points:
            fig.add_trace(go.Scatter(x=[k for k, _ in points], y=[v for _, v in points], name=name,
                                     mode="lines+markers"))
    fig.update_layout(height=380, margin=dict(l=10, r=10, t=30, b=10), xaxis_type="log", xaxis_title="k",
                      yaxis_title=CURVES[family], legend_title="method")
    return fig


access.require()
st.title("Evaluation")
st.caption("Load the metrics file written by `python -m recommender evaluate ... --json results.json`.")
upload = st.file_uploader("Metrics JSON", type=["json"], key="eval_file")
if upload is None:
    st.info("Upload a metrics file to compare the methods it holds.", icon="📈")
    st.stop()
try:
    methods = methods_of(json.loads(upload.getvalue().decode("utf-8")))
except (UnicodeDecodeError, json.JSONDecodeError) as exc:
    st.error(f"{upload.name} is not a JSON file: {exc}")
    st.stop()
if not methods:
    st.error(f"{upload.name} holds no method metrics; expected {{\"method\": {{\"mrr\": …, \"ndcg@10\": …}}}}.")
    st.stop()

st.subheader("Ranking quality")
st.plotly_chart(summary_chart(methods), key="summary")
st.subheader("Metrics at cut-off k")
for tab, family in zip(st.tabs(list(CURVES.values())), CURVES):
    tab.plotly_chart(curve_chart(methods, family), key=f"curve_{family}")
st.subheader("All metrics")
columns = sorted({k for m in methods.values() for k in m}, key=column_order)
st.dataframe({"method": list(methods), **{k: [m.get(k) for m in methods.values()] for k in columns}},
             hide_index=True)
