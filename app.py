"""The citation recommender web app: `streamlit run app.py`."""
import streamlit as st

from pages.ui import access, engines, shelves
from recommender.backends import BackendError

st.set_page_config(page_title="Citation recommender", page_icon=":material/menu_book:", layout="wide")

PAGES = [
    st.Page("pages/recommend.py", title="Recommend", icon=":material/search:", default=True),
    st.Page("pages/citation_graph.py", title="Citation graph", icon=":material/hub:"),
    st.Page("pages/reviewer_check.py", title="Reviewer check", icon=":material/rate_review:"),
    st.Page("pages/corpus.py", title="Corpus", icon=":material/library_books:"),
    st.Page("pages/evaluation.py", title="Evaluation", icon=":material/monitoring:"),
]

page = st.navigation(PAGES, position="sidebar" if access.allowed() else "hidden")
shelves.keep_alive()
try:
    page.run()  # each page starts with access.require(): the login page, unless this session may use the app
except BackendError as exc:  # $CITREC_BACKEND failed during a query: say so, stay up
    engines.show_backend_fault(exc)
