"""The Recommend page against a real index: results, prompts, deep links, diversity and export."""
import csv
import io
import json
import logging
import re

import bibtexparser
from support.app_helpers import ask, open_app
from streamlit.testing.v1 import AppTest

from recommender.corpus.authors import author_key
from recommender.pipeline.user_input import MAX_TEXT_CHARS

TITLE = "Citation recommendation"
ABSTRACT = "We recommend references for a draft paper from its abstract."
FIRST = "Neural citation recommendation from paper abstracts"


def result_titles(at: AppTest) -> list[str]:
    return [r.title for r in at.session_state["results"]["recs"]]


def test_a_query_returns_result_cards(app_env):
    at = ask(open_app(), TITLE, ABSTRACT)
    assert result_titles(at)[0] == FIRST
    assert len(at.session_state["results"]["recs"]) == 10
    assert any("Neural citation recommendation from paper abstracts" in m.value for m in at.markdown)
    assert any("Close in meaning" in m.value or "Shares the terms" in m.value for m in at.markdown)
    assert any("https://doi.org/10.9999/cite.0" in m.value for m in at.markdown)
    assert any("Ada Lovelace" in c.value for c in at.caption)
    assert len(at.checkbox) == 10


def test_the_authors_field_brings_in_their_earlier_work(app_env):
    at = open_app()
    at.text_input(key="q_authors").input("Ada Lovelace")
    at = ask(at, "Residual networks for image classification", "Deep convolutional networks classify images.")
    recs = at.session_state["results"]["recs"]
    own = [r for r in recs if "Ada Lovelace" in r.authors]
    assert own and all("one of your authors" in r.explanation for r in own)


def test_empty_input_gets_a_gentle_prompt(app_env):
    at = ask(open_app(), "", "   ")
    assert not at.error and "results" not in at.session_state
    assert any("Paste a title and abstract" in i.value for i in at.info)


def test_long_input_is_truncated_with_a_notice(app_env):
    at = ask(open_app(), TITLE, ABSTRACT + " more words" * MAX_TEXT_CHARS)
    assert any("only the first 5,000 were used" in w.value for w in at.warning)
    assert result_titles(at)


def test_a_deep_link_fills_the_form_and_runs_the_query(app_env):
    at = open_app(context="Candidates are expanded with the citation graph [CIT] and reranked.")
    assert at.text_area(key="q_text").value.startswith("Candidates are expanded")
    assert at.session_state["q_mode"] == "passage"
    assert at.session_state["results"]["mode"] == "passage"
    assert "Citation graph expansion for recommending references" in result_titles(at)[:3]
    at = open_app(title=TITLE, abstract=ABSTRACT, k="20", diversity="0.5")  # not the default (0): the link's own
    assert result_titles(at)[0] == FIRST and at.text_input(key="q_title").value == TITLE
    assert len(result_titles(at)) == 20 and at.slider(key="q_diversity").value == 0.5
    assert at.query_params["title"] == TITLE and at.query_params["k"] == "20"  # the URL can be shared
    at = open_app(title=TITLE, k="many")
    assert "not a number" in at.warning[0].value and len(result_titles(at)) == 10


def test_a_deep_link_with_k_and_diversity_logs_no_widget_warning(app_env, monkeypatch):
    """The link's k and diversity go into the session state; sliders that also had defaults of their own made
    Streamlit log "created with a default value but also had its value set via the Session State API" with a
    stack trace (once per server process, on the first shared link or "More like this")."""
    from streamlit.elements.lib import policies

    logged = []
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(record.getMessage())
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)  # logged once per process
    policies._LOGGER.addHandler(handler)
    try:
        at = open_app(title=TITLE, abstract=ABSTRACT, k="20", diversity="0.5")
    finally:
        policies._LOGGER.removeHandler(handler)
    assert len(result_titles(at)) == 20 and at.slider(key="q_diversity").value == 0.5
    assert not [m for m in logged if "default value" in m], logged
    at = open_app()
    assert at.slider(key="q_k").value == 10 and at.slider(key="q_diversity").value == 0.0  # the defaults


def test_more_like_this_leaves_the_paper_itself_out_until_the_title_is_changed(app_env):
    abstract = ("We embed the abstract of a draft with a neural encoder and recommend papers whose embeddings are "
                "nearest.")
    at = open_app(title=FIRST, abstract=abstract, like="cite0")  # the citation graph's "More like this" link
    assert FIRST not in result_titles(at) and len(result_titles(at)) == 10
    assert at.query_params["like"] == "cite0"  # a shared link keeps it
    at = ask(at, FIRST + " revisited", abstract)  # now a text of one's own: every paper may come back
    assert result_titles(at)[0] == FIRST and "like" not in at.query_params


def test_more_like_this_names_the_paper_and_leads_back_to_the_draft(app_env):
    at = ask(open_app(), TITLE, ABSTRACT)
    mine = result_titles(at)
    at.session_state["deep_link_seen"] = False  # as the citation graph's button does, then its link
    at.query_params.update(title=FIRST, abstract="We embed the abstract of a draft with a neural encoder.",
                           like="cite0")
    at.run()
    assert not at.exception, at.exception
    assert FIRST not in result_titles(at) and any(m.value.startswith("**More like Lovelace 2010**")
                                                  for m in at.markdown)
    at.button(key="q_back").click().run()
    assert not at.exception, at.exception
    assert at.text_input(key="q_title").value == TITLE and at.text_area(key="q_text").value == ABSTRACT
    assert result_titles(at) == mine and not any("More like" in m.value for m in at.markdown)


def test_moving_the_diversity_slider_after_a_query_ranks_again_at_once(app_env):
    at = ask(open_app(), TITLE, ABSTRACT, q_k=5, q_diversity=0.0)
    lovelace = sum("Ada Lovelace" in r.authors for r in at.session_state["results"]["recs"])
    at.slider(key="q_diversity").set_value(2.0).run()  # no press of Recommend
    assert not at.exception, at.exception
    assert sum("Ada Lovelace" in r.authors for r in at.session_state["results"]["recs"]) < lovelace


def test_a_text_in_another_language_gets_a_note(app_env):
    at = ask(open_app(), "Empfehlung von Zitaten", "Wir empfehlen Literaturangaben für den Entwurf eines Artikels.")
    assert "looks German; it was matched through the multilingual index" in at.info[0].value
    assert "100% of this corpus's titles are English" in at.info[0].value
    assert "read in English as: “" in at.info[0].value and "recommend" in at.info[0].value
    assert not ask(at, TITLE, ABSTRACT).info


def author_spread(at: AppTest) -> int:
    return len({author_key(a) for r in at.session_state["results"]["recs"] for a in r.authors})


def test_the_diversity_slider_spreads_the_authors(app_env):
    at = ask(open_app(), TITLE, ABSTRACT, q_k=5, q_diversity=0.0)
    plain = author_spread(at)
    lovelace_plain = sum("Ada Lovelace" in r.authors for r in at.session_state["results"]["recs"])
    at = ask(at, TITLE, ABSTRACT, q_k=5, q_diversity=2.0)
    assert author_spread(at) >= plain
    assert sum("Ada Lovelace" in r.authors for r in at.session_state["results"]["recs"]) < lovelace_plain


def export_text(at: AppTest, fmt: str) -> str:
    at.button_group(key="rec_export_format").set_value(fmt).run()
    assert not at.exception, at.exception
    return at.sidebar.code[0].value


def ris_records(text: str) -> list[dict[str, list[str]]]:
    records, current = [], {}
    for line in text.splitlines():
        tag, _, value = line.partition("  - ")
        if tag == "ER":
            records.append(current)
            current = {}
        elif line.strip():
            current.setdefault(tag, []).append(value)
    return records


def test_selected_results_export_as_parseable_bibtex_ris_csl_json_and_csv(app_env):
    at = ask(open_app(), TITLE, ABSTRACT)
    chosen = [r.paper_id for r in at.session_state["results"]["recs"][:3:2]]
    for pid in chosen:
        at.checkbox(key=f"sel:{pid}").check()
    at.run()
    assert at.sidebar.radio[0].value == "Selected (2)"
    titles = {r.title for r in at.session_state["results"]["recs"] if r.paper_id in chosen}
    assert at.sidebar.get("download_button")[0].label == "Download BibTeX"

    bib = bibtexparser.parse_string(export_text(at, "BibTeX"))
    assert not bib.failed_blocks and {e.fields_dict["title"].value for e in bib.entries} == titles
    keys = [e.key for e in bib.entries]
    assert len(set(keys)) == 2
    ris = ris_records(export_text(at, "RIS"))
    assert {r["TI"][0] for r in ris} == titles and [r["ID"][0] for r in ris] == keys
    csl = json.loads(export_text(at, "CSL-JSON"))
    assert {item["title"] for item in csl} == titles and [item["id"] for item in csl] == keys
    rows = list(csv.DictReader(io.StringIO(export_text(at, "CSV"))))
    assert {row["title"] for row in rows} == titles and [row["key"] for row in rows] == keys

    at.sidebar.radio[0].set_value("All results (10)").run()
    everything = json.loads(export_text(at, "CSL-JSON"))
    assert len(everything) == 10 and len({item["id"] for item in everything}) == 10
    assert {item["id"] for item in everything} >= set(keys)  # keys are stable across selections


def card_app():
    """One result card for a paper whose fields carry Markdown and HTML (runs as a script: imports inside)."""
    from pages.ui.cards import result_card
    from recommender.paper import Paper
    from recommender.query import Recommendation

    paper = Paper(id="x", title="<b>Bold</b> **star** [link](http://evil.example) :red[red]",
                  authors=["Eve <i>Evil</i>"], year=2020, venue="Conf $x$",
                  abstract="An abstract with <script>alert(1)</script> and _emphasis_.",
                  extra={"doi": "10.1/a)b", "url": "javascript:alert(1)"})
    rec = Recommendation(paper.id, paper.title, paper.authors, paper.year, paper.venue, 0.5, {},
                         "Closest passage: “<img src=x>”", paper.doi, 1)
    result_card(rec, paper)


def test_titles_and_abstracts_from_files_show_as_plain_text():
    at = AppTest.from_function(card_app).run()
    assert not at.exception, at.exception
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    for raw in ("<b>", "**star**", "[link]", ":red[", "<script>", "<img", "_emphasis_", "$x$", "<i>"):
        assert not re.search(r"(?<!\\)" + re.escape(raw), shown), raw  # only escaped forms appear
    assert "\\<b\\>Bold\\<\\/b\\>" in shown and "\\*\\*star\\*\\*" in shown
    assert "http\\:\u200b\\/\\/evil" in shown  # a bare URL is broken so that it is not linked
    assert "javascript" not in shown and "(https://doi.org/10.1/a%29b)" in shown
