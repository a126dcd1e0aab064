"""Helpers for the AppTest tests of the web app."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 120  # the first run loads the language models
PASSWORD = "correct horse battery staple"  # the lab's password in the login tests
SUBMIT = "FormSubmitter:login-Enter"
# A LaTeX draft for the Reviewer check's whole-draft tests: a cited sentence and a placeholder; each test ends it
# with an uncited claim (`draft(claim)`).
DRAFT_HEAD = r"""\documentclass{article}
\title{Recommending citations for scientific drafts}
\begin{document}
\maketitle
\begin{abstract}
We suggest references for a draft from its abstract and from the passages that need a citation.
\end{abstract}
\section{Introduction}
Drafts embedded by a neural encoder find related papers \cite{lovelace2010}.
A passage with a citation placeholder is matched against candidate papers to suggest the reference \cite{?}.

"""


def draft(claim: str) -> str:
    """DRAFT_HEAD, then `claim` as its last paragraph, and the end of the document."""
    return DRAFT_HEAD + claim + "\n\\bibliography{refs}\n\\end{document}\n"


def open_app(page: str | None = None, **params: str) -> AppTest:
    """Run the app once (with URL query parameters), then switch to `page` ("pages/x.py") if given."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(params)
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def ask(at: AppTest, title: str, text: str, **widgets) -> AppTest:
    """Fill the Recommend form (widgets by key, e.g. q_diversity=0.0) and press Recommend."""
    at.text_input(key="q_title").input(title)
    at.text_area(key="q_text").input(text)
    for key, value in widgets.items():
        at.slider(key=key).set_value(value)
    at.button(key="FormSubmitter:query_form-Recommend").click().run()
    assert not at.exception, at.exception
    return at


def locked_app(**params: str) -> AppTest:
    """The app with a lab password set (and URL query parameters), run once: its login page."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["citrec"] = {"password": PASSWORD}
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    return at


def log_in(at: AppTest, password: str) -> AppTest:
    """Enter `password` in the login form."""
    at.text_input(key="login_password").input(password)
    at.button(key=SUBMIT).click().run()
    assert not at.exception, at.exception
    return at
