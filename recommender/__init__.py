"""Citation recommender engine: `Recommender.load(index_dir).recommend(Query(...))`."""
from .query import Query, Recommendation, RecommendResult
from .recommender import Recommender

__all__ = ["Query", "Recommendation", "RecommendResult", "Recommender"]
