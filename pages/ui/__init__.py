"""What the pages share: the active index and cached engine objects, access control, corpora, the demo index,
the citation-graph figure. App code only; the engine (`recommender/`) never imports it."""
