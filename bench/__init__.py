"""Benchmarks: run from the project root as modules, e.g. `python -m bench.quality hepth --data ../shared/data`.

In the command lines of their docstrings IDX stands for the folder where you keep your indexes; defaults are
relative to the checkout (`bench/paths.py`), and each report records the machine it ran on (`bench/machine.py`).
"""
