"""Citation recommender engine: `Recommender.load(index_dir).recommend(Query(...))`."""
from recommender.pipeline.recommender import Recommender
from recommender.query import Query, Recommendation, RecommendResult

__all__ = ["Query", "Recommendation", "RecommendResult", "Recommender"]
