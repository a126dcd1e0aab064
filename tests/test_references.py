"""Tests of recommender.references (parse, match) and recommender.corpus.identifiers: normalization, reference-list parsing (as copied from PDFs) and matching."""
from __future__ import annotations

import gzip
import random

import pytest

from recommender.corpus.identifiers import normalize_arxiv, normalize_doi, normalize_title
from recommender.references.match import ReferenceIndex, match_references
from recommender.references.parse import (MAX_REFERENCES, ReferenceItem, cited_bibtex, parse_reference_line,
                                         parse_reference_list)
from recommender.references.text import decode_reference_bytes, entry_number, join_lines, split_entries
from support.corpora import REFERENCED_PAPERS


@pytest.fixture(scope="module")
def index() -> ReferenceIndex:
    return ReferenceIndex(REFERENCED_PAPERS)


def matched(text: str, index: ReferenceIndex) -> list[set[str]]:
    return [index.match_item(item) for item in parse_reference_list(text)]


# ----------------------------------------------------------------------------------------------- normalization


def test_normalize_title():
    assert normalize_title("  Über-Méthode:  A  Study!! ") == "uber methode a study"
    assert normalize_title("BERT's {R}anking") == "berts ranking"
    assert normalize_title(r"M\"{u}ller and M\'ethode") == "muller and methode"
    assert normalize_title("Straße") == "strasse"
    assert normalize_title("") == ""
    assert normalize_title("Learning to Rank") == normalize_title("learning-to-rank.")


@pytest.mark.parametrize("raw", [
    "10.1145/ABC.123", "https://doi.org/10.1145/abc.123", "http://dx.doi.org/10.1145/ABC.123",
    "doi:10.1145/abc.123", "DOI: 10.1145/abc.123", " 10.1145/abc.123. ", "10.1145/abc.123).",
])
def test_normalize_doi(raw):
    assert normalize_doi(raw) == "10.1145/abc.123"


def test_doi_with_parentheses_keeps_them():
    assert normalize_doi("10.1016/0306-4573(88)90021-0.") == "10.1016/0306-4573(88)90021-0"


@pytest.mark.parametrize("raw, expected", [
    ("1810.04805", "1810.04805"), ("arXiv:1810.04805v2", "1810.04805"), ("https://arxiv.org/abs/1810.04805", "1810.04805"),
    ("http://arxiv.org/pdf/1810.04805v1", "1810.04805"), ("arXiv:hep-th/9901001", "hep-th/9901001"),
    ("CoRR abs/1810.04805", "1810.04805"), ("bhagavatula2018content", ""), ("10.1145/3331184.3331185", ""),
])
def test_normalize_arxiv(raw, expected):
    assert normalize_arxiv(raw) == expected


# ----------------------------------------------------------------------------------------------- one entry


def test_parse_acm_style_line():
    item = parse_reference_line("A. Smith and B. Jones. 2019. Some title here. In Proc. X.")
    assert item.title == "Some title here" and item.year == 2019 and item.doi == ""


@pytest.mark.parametrize("entry, title, year", [
    ("Smith, A., & Jones, B. (2018). Learning to rank with BERT. Journal of IR, 3(2), 1-10.",
     "Learning to rank with BERT", 2018),
    ('A. Smith, B. Jones, \u201cDense passage retrieval for QA,\u201d in Proc. EMNLP, 2020, pp. 1-10.',
     "Dense passage retrieval for QA", 2020),
    ("Smith, A., Jones, B.: Why neural rankers work. In: Proceedings of SIGIR, pp. 1–10 (2019)",
     "Why neural rankers work", 2019),
    ("Smith, A. B., Jones, C. & Lee, D. Neural rankers at scale. Nature 521, 436–444 (2015).",
     "Neural rankers at scale", 2015),
    ("Smith, Ann, and Bo Jones. 2016. \u201cWhat do neural rankers learn?\u201d Journal of IR 3 (2): 1\u201310.",
     "What do neural rankers learn?", 2016),
])
def test_title_and_year_of_each_style(entry, title, year):
    item = parse_reference_line(entry)
    assert (item.title, item.year) == (title, year)


def test_identifiers_are_read_from_the_text():
    item = parse_reference_line("[7] J. Devlin et al. BERT. arXiv preprint arXiv:1810.04805v2, 2018. "
                                "https://doi.org/10.48550/arXiv.1810.04805.")
    assert item.arxiv == "1810.04805" and item.doi == "10.48550/arxiv.1810.04805"
    assert item.raw.startswith("J. Devlin")


# ----------------------------------------------------------------------------------------------- splitting

ACM_NUMBERED = """References
[1] Chandra Bhagavatula, Sergey Feldman, Russell Power, and Waleed Am-
mar. 2018. Content-Based Citation Recommendation. In Proceedings of
NAACL-HLT. 238–251.
[2] Jacob Devlin, Ming-Wei Chang, Kenton Lee, and Kristina Toutanova.
2019. BERT: Pre-training of Deep Bidirectional Transformers for Lan-
guage Understanding. In Proceedings of NAACL-HLT. 4171–4186.
[3] Sepp Hochreiter and Jürgen Schmidhuber. 1997. Long Short-Term
Memory. Neural Computation 9, 8 (1997), 1735–1780.
[4] Vladimir Karpukhin, Barlas Oguz, Sewon Min, et al. 2020. Dense Passage
Retrieval for Open-Domain Question Answering. In EMNLP. 6769–6781.
https://doi.org/10.18653/v1/
2020.emnlp-main.550
[5] Jane Roe. 2021. A BERT-
based survey of neural ranking for scholarly search. In Proceedings
of JCDL. 1–10.
"""


def test_wrapped_numbered_list_is_joined_and_dehyphenated(index):
    items = parse_reference_list(ACM_NUMBERED)
    assert [item.line for item in items] == [2, 5, 8, 10, 14]
    assert "Waleed Ammar. 2018." in items[0].raw
    assert items[1].title == "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"
    assert items[3].doi == "10.18653/v1/2020.emnlp-main.550"
    assert items[4].title == "A BERT-based survey of neural ranking for scholarly search"  # a real hyphen
    assert [index.match_item(item) for item in items] == [{"cbcr"}, {"bert"}, {"lstm"}, {"dpr"}, set()]


APA = """Bhagavatula, C., Feldman, S., Power, R., & Ammar, W. (2018). Content-
based citation recommendation. In Proceedings of NAACL-HLT (pp. 238–
251).
Dehghani, M., Zamani, H., Severyn, A., Kamps, J., & Croft, W. B.
(2017). Neural ranking models with weak supervision. In Proceedings of
SIGIR (pp. 65–74).
Devlin, J., Chang, M.-W., Lee, K., & Toutanova, K. (2019). BERT: Pre-
training of deep bidirectional transformers for language understanding.
arXiv preprint arXiv:1810.04805.
Roe, J. (2021). Neural ranking models. Journal of IR, 3(2), 1–10.
van der Berg, A. (2020). Graph neural networks for citation recommendation.
In Proceedings of JCDL (pp. 1–10).
"""

NATURE = """1. Hochreiter, S. & Schmidhuber, J. Long short-term memory. Neural Comput.
9, 1735–1780 (1997).
2. Liu, T.-Y. Learning to rank for information retrieval. Found. Trends Inf.
Retr. 3, 225–331 (2009).
3. Roe, J. A study of ranking. J. Mach. Learn. Res. 3, 1–10 (2003).
"""

CHICAGO = """Bhagavatula, Chandra, Sergey Feldman, Russell Power, and Waleed Ammar. 2018.
“Content-Based Citation Recommendation.” In Proceedings of NAACL-HLT, 238–51.
Hochreiter, Sepp, and Jürgen Schmidhuber. 1997. “Long Short-Term Memory.”
Neural Computation 9 (8): 1735–80.
Roe, Jane. 2021. “Attention, Please: Neural Ranking Models Revisited.” In
Proceedings of JCDL, 1–10.
"""

IEEE_PARENS = """(1) T.-Y. Liu, “Learning to rank for information retrieval,” Found. Trends
Inf. Retr., vol. 3, no. 3, pp. 225–331, 2009.
(2) V. Karpukhin, B. Oguz, S. Min, P. Lewis, L. Wu, S. Edunov, D. Chen, and W.-t.
Yih, “Dense passage retrieval for open-domain question answering,” in Proc.
EMNLP, 2020, pp. 6769–6781.
"""


@pytest.mark.parametrize("text, expected", [
    (APA, [{"cbcr"}, {"nrm-weak"}, {"bert"}, set(), set()]),  # Roe's title is not Mitra's paper (author check)
    (NATURE, [{"lstm"}, {"ltr"}, set()]),
    (CHICAGO, [{"cbcr"}, {"lstm"}, set()]),
    (IEEE_PARENS, [{"ltr"}, {"dpr"}]),
])
def test_styles_are_split_into_their_entries_and_matched(text, expected, index):
    assert matched(text, index) == expected


def test_one_reference_per_line_still_works(index):
    lines = "\n".join([
        "[12] A. Smith and B. Jones. 2019. Why do Neural Rankers Work? In Proc. SIGIR. "
        "https://doi.org/10.1145/3331184.3331185.",
        "",
        '3. V. Karpukhin, B. Oguz, \u201cDense passage retrieval for open-domain question answering,\u201d '
        "in Proc. EMNLP, 2020.",
        "Liu, T.-Y. (2009). Learning to rank for information retrieval. Foundations and Trends in IR, 3(3).",
        "Learning to rank for information retrieval",
    ])
    items = parse_reference_list(lines)
    assert [item.line for item in items] == [1, 3, 4, 5]
    assert [index.match_item(item) for item in items] == [{"10.1145/3331184.3331185"}, {"dpr"}, {"ltr"}, {"ltr"}]


def test_headings_blank_lines_and_page_numbers_are_not_references():
    text = "REFERENCES\n\n[1] A. Smith. 2019. A first title. In Proc. X.\n\n14\n\n[2] B. Jones. 2020. A second title.\n"
    assert [entry for _, entry in split_entries(text)] == ["[1] A. Smith. 2019. A first title. In Proc. X.",
                                                            "[2] B. Jones. 2020. A second title."]


def test_years_at_line_starts_are_not_entry_numbers():
    text = ("[1] Jacob Devlin, Ming-Wei Chang, Kenton Lee, and Kristina Toutanova.\n"
            "2019. BERT: pre-training of deep bidirectional transformers. In NAACL.\n"
            "[2] Sepp Hochreiter and Jürgen Schmidhuber.\n1997. Long short-term memory.\n")
    assert len(split_entries(text)) == 2


def test_numbers_in_brackets_go_past_999():
    text = "".join(f"[{n}] A. Author{n}. 2019. Title number {n}.\n" for n in range(997, 1003))
    assert [entry_number(entry) for _, entry in split_entries(text)] == list(range(997, 1003))
    years = "[2019] Smith, A. Title one.\n[2020] Doe, B. Title two.\n[2018] Roe, C. Title three.\n"
    assert [entry_number(entry) for _, entry in split_entries(years)] == [None, None, None]  # years, not numbers


def test_pdf_artefacts_are_undone():
    assert split_entries("Citation recom-\nmendation with ﬁne-tuned\u00ad BERT-\nbased rankers") == \
        [(1, "Citation recommendation with fine-tuned BERT-based rankers")]
    assert join_lines(["pages 45–", "67"]) == "pages 45–67"
    assert join_lines(["See https://doi.org/10.1145/", "3331184.3331185 for details"]) == \
        "See https://doi.org/10.1145/3331184.3331185 for details"
    # a compound seen whole elsewhere in the list keeps its hyphen
    assert join_lines(["open-", "domain QA"], frozenset({"open-domain"})) == "open-domain QA"


def test_bibitem_lists_from_latex():
    text = r"""\begin{thebibliography}{10}
\bibitem{liu2009}
T.-Y. Liu.
\newblock Learning to rank for information retrieval.
\newblock {\em Foundations and Trends in IR}, 3(3):225--331, 2009.

\bibitem[Hochreiter and Schmidhuber(1997)]{lstm}
S.~Hochreiter and J.~Schmidhuber.
\newblock Long short-term memory.
\newblock {\em Neural Computation}, 9(8):1735--1780, 1997.
\end{thebibliography}"""
    items = parse_reference_list(text)
    assert [item.line for item in items] == [2, 7]
    assert items[0].raw.startswith("T.-Y. Liu. Learning to rank") and "\\" not in items[0].raw
    assert match_references(items, REFERENCED_PAPERS) == {"ltr", "lstm"}


# ----------------------------------------------------------------------------------------------- BibTeX and files

BIB_LIST = r"""@inproceedings{karpukhin2020,
  title = {Dense Passage Retrieval for Open-Domain Question Answering},
  doi = {10.18653/V1/2020.EMNLP-MAIN.550},
  year = 2020,
}
@book{liu2009, title = {Learning to Rank for Information {R}etrieval}, year = {2009}}
@misc{devlin2018, title = {{BERT}}, eprint = {1810.04805}, archivePrefix = {arXiv}}
@misc{unknown, title = {Not in the corpus at all}}
"""


def test_parse_bibtex_reference_list():
    items = parse_reference_list(BIB_LIST)
    assert [i.key for i in items] == ["karpukhin2020", "liu2009", "devlin2018", "unknown"]
    assert all(i.kind == "bibtex" for i in items)
    assert items[0].doi == "10.18653/v1/2020.emnlp-main.550"
    assert items[1].title == "Learning to Rank for Information Retrieval" and items[1].year == 2009
    assert items[1].line == 6
    assert items[2].arxiv == "1810.04805"


@pytest.mark.parametrize("entry, what", [("@misc{{k{i}, title={{T}}}}\n", "BibTeX entries"),
                                         ("@misc{{k{i}, title={{T}}}} ", "BibTeX entries"),  # on one line
                                         ("[{n}] A. Author. 2019. Title {i}.\n", "entries"),
                                         ("\\bibitem{{k{i}}} A. Author. Title {i}.\n", "\\\\bibitem entries")])
def test_a_list_of_more_entries_than_any_paper_cites_is_refused_with_its_limit(entry, what):
    entries = "".join(entry.format(i=i, n=i + 1) for i in range(41))
    with pytest.raises(ValueError, match=f"over 40 {what}"):
        parse_reference_list(entries, most=40)
    assert len(parse_reference_list(entries[:entries.rindex(entry[0])], most=40)) == 40
    assert len(parse_reference_list(entries, most=None)) == 41  # a user's own library, on their machine
    assert MAX_REFERENCES >= 5_000  # a survey's list is read
    if "bibitem" in entry:  # an empty entry counts too (the last one's text would be read to the end)
        with pytest.raises(ValueError, match="over 40"):
            parse_reference_list("\\bibitem{e}\n" + entries[:entries.rindex(entry[0])], most=40)


def test_cited_bibtex_keeps_the_cited_entries_strings_and_line_numbers():
    text = "@string{jir = {J. IR}}\n" + BIB_LIST
    items = parse_reference_list(cited_bibtex(text, {"LIU2009", "devlin2018", "absent"}))
    assert [(item.key, item.line) for item in items] == [("liu2009", 7), ("devlin2018", 8)]


@pytest.mark.parametrize("bib", ["@misc{a, title={A}} @misc{b(2019), title={B}}",      # one line
                                 "@misc{a, title={A}}\r@misc{b(2019), title={B}}\r",  # old Mac line ends
                                 "\u00a0@misc{b(2019), title={B}}\n\f@misc{a, title={A}}\n"])
def test_cited_bibtex_finds_entries_where_bibtex_does(bib):
    assert [item.key for item in parse_reference_list(cited_bibtex(bib, {"b(2019)"}))] == ["b(2019)"]


def test_string_macros_do_not_count_as_entries():
    text = "".join(f"@string{{s{i} = {{x}}}}\n" for i in range(50)) + "@misc{k, title={T}}\n"
    assert [item.key for item in parse_reference_list(text, most=40)] == ["k"]


def test_match_bibtex_by_doi_arxiv_and_title():
    assert match_references(parse_reference_list(BIB_LIST), REFERENCED_PAPERS) == {"dpr", "ltr", "bert"}


def test_parse_from_path_plain_and_gzip(tmp_path):
    path = tmp_path / "refs.bib"
    path.write_text(BIB_LIST)
    assert [i.key for i in parse_reference_list(path)] == ["karpukhin2020", "liu2009", "devlin2018", "unknown"]
    assert parse_reference_list(str(path))[0].raw == str(path)  # a str is text, never opened as a file
    gz = tmp_path / "refs.txt.gz"
    gz.write_bytes(gzip.compress(b"[1] J. Doe. 2009. Learning to rank for information retrieval. Now.\n"))
    [item] = parse_reference_list(gz)
    assert item.title == "Learning to rank for information retrieval"


# ----------------------------------------------------------------------------------------------- binary input


def random_bytes(size: int = 20_000) -> bytes:
    return random.Random(7).randbytes(size)


@pytest.mark.parametrize("data, message", [
    (random_bytes(), "does not look like text"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\n", "PDF file"),
    (b"PK\x03\x04\x14\x00\x06\x00" + random_bytes(2000), "zip-based document"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + random_bytes(500), "does not look like text"),
    (b"\x1f\x8b\x08\x00" + random_bytes(300), "gzip file is damaged"),
    (gzip.compress(random_bytes()), "does not look like text"),
])
def test_binary_files_are_refused_with_a_clear_message(data, message):
    with pytest.raises(ValueError, match=message):
        decode_reference_bytes(data)


def test_unmapped_pdf_glyphs_do_not_make_text_binary():
    text = "[1] J. Smith. 2019. E\ufffdcient \ufffdne-tuning of rankers. In Proc. SIGIR. 1\ufffd10.\n" * 20
    assert len(parse_reference_list(text)) == 20


def test_a_binary_file_given_as_path_is_refused(tmp_path):
    path = tmp_path / "refs.txt"
    path.write_bytes(random_bytes())
    with pytest.raises(ValueError, match="does not look like text"):
        parse_reference_list(path)


@pytest.mark.parametrize("encoded", [
    "[1] J. Müller. 2009. Learning to rank for information retrieval.\n".encode("cp1252"),
    "\ufeff[1] J. Müller. 2009. Learning to rank for information retrieval.\n".encode("utf-8"),
    "[1] J. Müller. 2009. Learning to rank for information retrieval.\n".encode("utf-16"),
])
def test_text_in_common_encodings_is_read(encoded):
    [item] = parse_reference_list(decode_reference_bytes(encoded))
    assert item.raw.startswith("J. Müller.") and item.title == "Learning to rank for information retrieval"


# ----------------------------------------------------------------------------------------------- matching


def test_match_doi_against_id_that_is_a_doi(index):
    item = parse_reference_line("X. Y. 2019. Garbled title. doi:10.1145/3331184.3331185")
    assert index.match_item(item) == {"10.1145/3331184.3331185"}


@pytest.mark.parametrize("entry", [
    "J. Devlin et al., “Pretraining deep transformers,” arXiv:1810.04805, 2018.",
    "Devlin, J. (2018). BERT. https://arxiv.org/abs/1810.04805v2",
    "J. Devlin. 2018. BERT. CoRR abs/1810.04805 (2018).",
])
def test_match_by_arxiv_id(entry, index):
    assert index.match_item(parse_reference_line(entry)) == {"bert"}


def test_typos_match_when_an_author_agrees(index):
    typo = "Liu, T.-Y. (2009). Learning to rank for informaton retreival. Springer."
    assert index.match_item(parse_reference_line(typo)) == {"ltr"}
    stranger = "Roe, J. (2009). Learning to rank for informaton retreival. Springer."
    assert index.match_item(parse_reference_line(stranger)) == set()


def test_short_titles_need_author_and_year(index):
    assert index.match_item(parse_reference_line("Scarselli, F. (2009). Graph neural networks. IEEE TNN.")) == {"gnn"}
    assert index.match_item(parse_reference_line("Roe, J. (2009). Graph neural networks. IEEE TNN.")) == set()
    assert index.match_item(parse_reference_line("Scarselli, F. (2015). Graph neural networks. Book.")) == set()


def test_a_corpus_title_inside_a_longer_title_does_not_match(index):
    for entry in [
        "Z. Wu. 2020. A comprehensive survey on graph neural networks. IEEE TNNLS.",
        "B. Mitra. 2018. Neural ranking models: A tutorial. In SIGIR.",  # the corpus title as main title
        "A. Vaswani. 2016. Attention is all you need. In NeurIPS.",
        "B. C. 2021. Subgraph neural networksx. In KDD.",
    ]:
        assert index.match_item(parse_reference_line(entry)) == set(), entry


def test_longest_title_wins(index):
    item = parse_reference_line("M. Dehghani. 2017. Neural ranking models with weak supervision. In SIGIR.")
    assert index.match_item(item) == {"nrm-weak"}


def test_long_exact_titles_match_without_authors_or_years(index):
    assert index.match_item(parse_reference_line("Someone. 2017. Uber methodes de recherche! Paris.")) == {"uber"}
    assert index.match_item(parse_reference_line("T.-Y. Liu. Learning to Rank for Information Retrieval, "
                                                 "Springer")) == {"ltr"}
    bare = parse_reference_line("J. Doe. 2001. A paper whose record has no authors or year. In X.")
    assert index.match_item(bare) == {"bare"}


def test_an_exact_title_with_another_author_and_year_is_another_paper(index):
    item = parse_reference_line("Roe, J. (2001). Learning to rank for information retrieval. Springer.")
    assert index.match_item(item) == set()


def test_two_references_read_as_one_still_match_both(index):
    item = parse_reference_line("Hochreiter, S. & Schmidhuber, J. Long short-term memory. Neural Comput. 9, "
                                "1735–1780 (1997). Liu, T.-Y. Learning to rank for information retrieval. "
                                "Found. Trends Inf. Retr. 3, 225–331 (2009).")
    assert index.match_item(item) == {"lstm", "ltr"}


def test_short_bibtex_title_matches_exactly():
    item = ReferenceItem(raw="@misc{a, title={Attention}}", title="Attention", kind="bibtex")
    assert match_references([item], REFERENCED_PAPERS) == {"attention"}


def test_unrelated_lines_match_nothing(index):
    assert index.match(parse_reference_list("J. Doe. 2001. A study of cats. Cat Journal.\nSomething else")) == set()
    assert index.match([]) == set()
