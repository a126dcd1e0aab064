"""Citation recommender engine: `Recommender.load(index_dir).recommend(Query(...))`."""
from recommender.query import Query, Recommendation, RecommendResult
from recommender.pipeline.recommender import Recommender

__all__ = ["Query", "Recommendation", "RecommendResult", "Recommender"]
