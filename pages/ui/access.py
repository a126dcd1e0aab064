"""Who may use the app on a server, from .streamlit/secrets.toml.

- An `[auth]` table (Streamlit's OpenID Connect settings): people log in with their identity provider
  (`st.login`; needs the Authlib package). `[citrec] auth_provider = "name"` picks a provider table
  `[auth.name]` when there are several.
- Else `[citrec] password = "..."`: people enter the lab's password once per browser session; wrong ones
  slow the next try down and then lock the client out for a while (`login_throttle.py`).
- Else the app is open to everyone who reaches the server (the default, fine on one's own machine).
"""
from __future__ import annotations

import hmac

import streamlit as st

from pages.ui import login_throttle
from pages.ui.shelves import settings

GRANTED = "access_granted"


def method() -> str:
    """"oidc", "password" or "open"."""
    if st.secrets.load_if_toml_exists() and "auth" in st.secrets:
        return "oidc"
    return "password" if settings().get("password") else "open"


def allowed() -> bool:
    """Whether this session may see the app's pages."""
    how = method()
    if how == "oidc":
        return bool(st.user.is_logged_in)
    return how == "open" or bool(st.session_state.get(GRANTED))


def require() -> None:
    """Show the login page and stop unless this session may use the app; else the account menu.

    app.py calls it, and so does every page: until app.py has run once in the server process, Streamlit
    takes the folder pages/ for a legacy list of pages and runs a page's script without app.py when its
    address is opened (e.g. /corpus); AppTest does so on every rerun.
    """
    if not allowed():
        login_page()
    account_menu()


def login_page() -> None:
    """The login form in place of the app; stops the run."""
    st.title("Citation recommender")
    if method() == "oidc":
        st.write("This server is for the members of the lab. Log in to continue.")
        st.button("Log in", type="primary", icon=":material/login:", on_click=st.login,
                  args=(settings().get("auth_provider"),))
        st.stop()
    with st.form("login", border=False):
        password = st.text_input("Password", type="password", key="login_password")
        entered = st.form_submit_button("Enter", type="primary", icon=":material/login:")
    if entered:
        client, where = login_throttle.client()
        wait = login_throttle.THROTTLE.admit(client)  # counts this try; None: it may be checked
        if wait is not None:  # too soon after a wrong password, or locked out: the password is not even looked at
            st.error(login_throttle.message(wait, where))
            st.stop()
        expected = str(settings()["password"]).encode()
        if hmac.compare_digest(password.encode(), expected):
            login_throttle.THROTTLE.succeeded(client)
            st.session_state[GRANTED] = True
            st.rerun()
        st.error("Wrong password.")
        wait = login_throttle.THROTTLE.waiting(client)
        if wait is not None and wait.lockout:
            st.warning(login_throttle.message(wait, where))
    st.stop()


def log_out() -> None:
    st.session_state.pop(GRANTED, None)


def account_menu() -> None:
    """In the sidebar: who is logged in, and a button to log out (nothing when the app is open)."""
    how = method()
    if how == "open":
        return
    with st.sidebar:
        if how == "oidc":
            who = st.user.get("email") or st.user.get("name") or "you"
            st.caption(f"Logged in as {who}")
            st.button("Log out", icon=":material/logout:", on_click=st.logout, key="logout")
        else:
            st.button("Log out", icon=":material/logout:", on_click=log_out, key="logout")
