"""The error every corpus source raises for bad input or a failed read, worded for the command line."""


class SourceError(ValueError):
    """A source that cannot be read (network, HTTP error, bad filter, locked file); the message is one line."""
