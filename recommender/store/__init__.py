"""The index on disk: versions and manifest, per-paper columns, BM25, vectors, the citation graph, the glossary."""
