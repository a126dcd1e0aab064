"""What the pages share, all of it Streamlit: the active index, the cached engine objects, access control and the
login throttle, the session's shelves, result cards, the export panel, markdown escaping, progress bars, and the
parts of the Corpus and Reviewer check pages that are large enough for a module. What is not UI lives in
`workspace/`."""
