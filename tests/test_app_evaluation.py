"""The Evaluation page compares the methods of an `evaluate --json` file."""
import json

from support.app_helpers import open_app

PAGE = "pages/evaluation.py"
METRICS = {
    "bm25": {"mrr": 0.31, "map": 0.2, "ndcg@10": 0.25,
             **{f"{m}@{k}": 0.1 * i for i, k in enumerate((10, 20, 100, 1000)) for m in ("precision", "recall", "f1")}},
    "full": {"mrr": 0.42, "map": 0.3, "ndcg@10": 0.35, "recall@10": 0.4, "recall@1000": 0.9, "queries": 50},
    "queries": 50,
}


def upload(at, name: str, data: bytes):
    at.file_uploader(key="eval_file").set_value((name, data, "application/json")).run()
    assert not at.exception, at.exception
    return at


def test_methods_are_compared_in_charts_and_a_table(app_env):
    at = upload(open_app(PAGE), "results.json", json.dumps(METRICS).encode())
    assert len(at.get("plotly_chart")) == 4  # summary bars and three @k curves
    table = at.dataframe[0].value
    assert list(table["method"]) == ["bm25", "full"]
    assert list(table.columns[1:4]) == ["mrr", "map", "ndcg@10"] and table["mrr"][1] == 0.42


def test_bad_files_get_a_clear_error(app_env):
    at = upload(open_app(PAGE), "broken.json", b"{not json")
    assert "not a JSON file" in at.error[0].value and not at.get("plotly_chart")
    at = upload(open_app(PAGE), "other.json", b'{"queries": 5}')
    assert "holds no method metrics" in at.error[0].value
    assert any("Upload a metrics file" in i.value for i in open_app(PAGE).info)
