"""Reference lists: parse them (BibTeX, LaTeX, text copied from a PDF) and match them to a corpus."""
