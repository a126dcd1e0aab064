"""What the tests share, so that no test module imports another: corpora and drafts written for the tests,
the web app's AppTest helpers, a local HTTP server answering from fixtures, the benchmark data beside the
checkout, and the handshake with child processes that a test kills. `tests/` is on sys.path (pytest.ini's
`pythonpath`), so a test writes `from support.corpora import synthetic_papers`."""
