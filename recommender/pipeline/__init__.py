"""The query pipeline, stage by stage: prepare → retrieve → fuse → expand (pool) → features → learned → select →
explain; `recommender.py` runs it."""
