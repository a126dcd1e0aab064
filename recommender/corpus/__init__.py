"""Corpus records in and out: loaders (corpus files), sources (corpus builders), authors, identifiers, export."""
