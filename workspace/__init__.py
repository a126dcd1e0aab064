"""App services: what the web app does besides drawing pages — corpora on shelves and their background builds,
personal workspaces and the clean-up of unused ones, the demo index, the citation-graph figure, the app as a server
process.

May import the engine (`recommender`); never `streamlit`, `pages`, `bench` or `tests`."""
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
