"""Serving the engine where people write: the HTTP API and the language server."""
