"""Reading whole drafts and submissions (PDF, LaTeX, Markdown, plain text, DOCX) into a `Document`."""
