"""Citation recommender engine: `Recommender.load(index_dir).recommend(Query(...))`. The names are imported on
first use, so that `python -m recommender` loads the engine inside the command line (where Ctrl-C is handled)."""
from importlib import import_module

_HOMES = {"Recommender": "recommender.pipeline.recommender", "Query": "recommender.query",
          "Recommendation": "recommender.query", "RecommendResult": "recommender.query"}
__all__ = ["Query", "Recommendation", "RecommendResult", "Recommender"]


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'recommender' has no attribute {name!r}")
