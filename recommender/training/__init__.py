"""Learning from an index's own citations (`python -m recommender train`): the encoder head (`encoder`) and
the reranker (`reranker`). Training builds on the run-time parts; they never import it."""
