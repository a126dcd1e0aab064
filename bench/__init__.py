"""Benchmarks: run from the project root as modules, e.g. `python -m bench.quality hepth --data ../shared/data`."""
