"""Corpus builders: download or read a field's literature and write it as a JSONL corpus for `index`.

One module per source: `openalex` (the OpenAlex API), `semantic_scholar` (the Semantic Scholar Graph API for a
seed set), `semantic_scholar_datasets` (its bulk Datasets files), `arxiv_snapshot` (the arXiv metadata
snapshot), `zotero` (a Zotero library) and `pdf_folder` (a folder of PDFs, with `pdf_front`
reading their bylines). `corpus_file` writes the result, `partial` keeps an interrupted
download resumable, `web` is the polite HTTP client, and `command` is the `corpus` command line.
"""
