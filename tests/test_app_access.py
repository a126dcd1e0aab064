"""Login for a server: a password from secrets.toml closes every page until it is entered; no setting, no gate."""
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from support.app_helpers import APP, PASSWORD, TIMEOUT, locked_app, log_in

ROOT = Path(APP).parent

PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py")
               if "access.require()" in p.read_text(encoding="utf-8"))




def shows_a_page(at: AppTest) -> bool:
    return any(t.value != "Citation recommender" for t in at.title)


def test_every_page_of_the_app_asks_for_the_login():
    pages = {f"pages/{name}" for name in re.findall(r'st\.Page\("pages/(\w+\.py)"', (ROOT / "app.py").read_text())}
    assert len(pages) == 5 and pages == set(PAGES)


def test_no_page_is_shown_before_the_password(app_env):
    at = locked_app()
    assert [t.value for t in at.title] == ["Citation recommender"] and not shows_a_page(at)
    assert log_in(at, "correct horse").error[0].value == "Wrong password."
    assert not shows_a_page(at)
    for page in PAGES:  # every page's address is locked too
        at.switch_page(page).run()
        assert not at.exception, at.exception
        assert not shows_a_page(at) and not at.metric and at.text_input(key="login_password")


def test_the_right_password_opens_the_app_until_logout(app_env):
    at = locked_app(title="Citation recommendation", abstract="We recommend references for a draft.")
    log_in(at, PASSWORD)
    assert at.title[0].value == "Find citations for your draft"
    assert at.session_state["results"]["recs"]  # the deep link survived the login
    at.switch_page("pages/corpus.py").run()
    assert at.title[0].value == "Corpus"
    at.button(key="logout").click().run()
    assert not shows_a_page(at) and at.text_input(key="login_password")


def test_without_a_password_the_app_is_open(app_env):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["citrec"] = {"shared_corpora": False}
    at.run()
    assert at.title[0].value == "Find citations for your draft"
    assert "logout" not in [b.key for b in at.button]


def test_single_sign_on_shows_only_the_login_button_until_the_provider_logs_the_user_in(app_env):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32,
                          "client_id": "lab", "client_secret": "secret",
                          "server_metadata_url": "https://id.example.org/.well-known/openid-configuration"}
    at.user = {"is_logged_in": False}
    at.run()
    assert not at.exception, at.exception
    assert not shows_a_page(at) and [b.label for b in at.button] == ["Log in"]
    assert "login_password" not in [t.key for t in at.text_input]  # no password with single sign-on
    at.user = {"is_logged_in": True, "email": "ada@lab.example.org"}
    at.run()
    assert at.title[0].value == "Find citations for your draft"
    assert "Logged in as ada@lab.example.org" in [c.value for c in at.sidebar.caption]
