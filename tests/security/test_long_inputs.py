"""Text a remote user controls (a /recommend field, a /review upload, a reference list) read in time that grows
with its length, not with its square or worse: each input below took from half a minute to hours before its fix
(docs/security.md) and takes well under a second now. The bound asserted is the process's CPU time, generous so
that a loaded machine cannot fail it, far below what the old patterns took."""
from __future__ import annotations

import io
import time

import numpy as np
import pytest

from bench.hostile import word_file
from bench.long_inputs import check_reference_text, citation_query_at_end, large_bib

from recommender.documents.errors import DocumentError
from recommender.documents.latex import read_latex
from recommender.documents.limits import MAX_DOCX_STYLES, MAX_PARAGRAPHS
from recommender.documents.markers import find_markers
from recommender.documents.read import read_document
from recommender.embedding.encoders import get_encoder
from recommender.pipeline.language import detect_language
from recommender.references.parse import MAX_ENTRY_CHARS, parse_reference_list
from recommender.review.claims import ClaimScorer, split_sentences
from recommender.serve.context import citation_query, document_kind
from recommender.serve.sentences import body_sentences
from recommender.store.gloss import Glossary

CPU_SECONDS = 5.0


def cpu_time(function, *args):
    started = time.process_time()
    result = function(*args)
    return result, time.process_time() - started


LINEAR_IDS = ["hyphenated name", "hyphenated name in parentheses", "narrative in one word", "markers side by side",
              "blank lines", "run-on sentence", "brackets", "link brackets", "cite in a long name", "Chinese without spaces",
              "word ending a line", "URL's next line", "a list of blank lines", "an entry and blank lines"]


@pytest.mark.parametrize("function, text", [
    (find_markers, "Smith and Ab" + "-Ab" * 40 + "! (2020)"),          # exponential before: a hyphenated name
    (find_markers, "(Ab" + "-Ab" * 40 + "!, 2020)"),
    (find_markers, "Ab-" * 60_000),                                      # narrative citations tried inside words
    (find_markers, "[1] " * 50_000),                                     # each marker compared with all before
    (split_sentences, "Hello world [CIT]." + " \n" * 20_000 + "x"),      # a paragraph break: cubic
    (split_sentences, "go on now. " * 200_000),                          # one sentence continued: each piece copied it
    (document_kind, "[" * 300_000),                                      # Markdown detection
    (document_kind, "](" * 150_000),
    (document_kind, "\\" + "cite" * 32_000 + "X{"),                        # 54 s: "cite[a-z]*" from every "cite"
    (detect_language, "中" * 400_000),                  # script runs built by copying; an e-mail's name unbounded
    (parse_reference_list, "a" * 300_000 + "\nb"),                       # a word ending a line: hyphenated?
    (parse_reference_list, "Smith, J. 2020. See https://x.org/a\n" + "1" * 300_000 + "!"),  # a URL's next line
    (parse_reference_list, "\n" * 300_000),                            # "^\s*@" searched from every line
    (parse_reference_list, "[1] A. Smith. 2019. A title.\n" + " \n" * 150_000),
], ids=LINEAR_IDS)
def test_hostile_text_is_read_in_linear_time(function, text):
    _, seconds = cpu_time(function, text)
    assert seconds < CPU_SECONDS, f"{function.__name__} took {seconds:.1f} s of CPU on {len(text):,} characters"


def _read(name: str, text: str):
    return read_document(text.encode("utf-8"), name)


@pytest.mark.parametrize("name, text", [
    ("a.md", "Intro. " + "*a " * 40_000),                              # emphasis never closed
    ("a.md", "Intro. " + "<!--" * 40_000),                             # comments never closed
    ("a.md", "Intro. " + "[^a" * 40_000 + " " + "[a](" * 40_000 + " " + "![" * 40_000),
    ("a.txt", "Intro. " + "\\cite[" * 40_000),                         # an option bracket never closed
    ("a.tex", "\\begin{document}\n" + "\\begin{verbatim}" * 20_000 + "\n\\end{document}"),
    ("a.tex", "\\begin{document}\n" + "\\iffalse " * 20_000 + "\n\\end{document}"),
    ("notes", "Intro [1].\n" + "\n" * 300_000),                         # Markdown and BibTeX sniffing
    ("a.tex", "\\documentclass{article}\n" + "\\usepackage{x}\n" * 80_000
     + "\\begin{document}\nA paragraph long enough to be read as a passage of the draft.\n\\end{document}"),
], ids=["emphasis", "comments", "footnotes links images", "cite options", "verbatim", "iffalse", "blank lines",
        "preamble"])
def test_hostile_documents_are_read_in_linear_time(name, text):
    started = time.process_time()
    try:
        _read(name, text)
    except DocumentError:  # refused with a message is fine too: the time is what is tested
        pass
    seconds = time.process_time() - started
    assert seconds < CPU_SECONDS, f"{name} took {seconds:.1f} s of CPU"


@pytest.mark.parametrize("text", ["{" * 400 + "x" + "}" * 400, "\\textbf{" * 300, "\\section{" * 2000],
                         ids=["braces", "textbf", "section"])
def test_deep_nesting_is_refused_with_a_message(text):
    with pytest.raises(DocumentError, match="too deeply"):
        _read("a.tex", "\\begin{document}\n" + text + "\n\\end{document}")


def test_a_word_file_with_thousands_of_styles_is_refused_before_it_is_parsed():
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    word = docx.Document()
    for i in range(1_100):
        word.styles.add_style(f"Style {i}", WD_STYLE_TYPE.PARAGRAPH)
    word.add_paragraph("A paragraph of the draft that is long enough to be read as one of its passages.")
    buffer = io.BytesIO()
    word.save(buffer)
    with pytest.raises(DocumentError, match="list of styles is over 1,000 styles"):
        read_document(buffer.getvalue(), "draft.docx")


def test_a_word_file_at_its_paragraph_and_style_limits_is_read_in_linear_time():
    """python-docx searched every style for each paragraph's and run's style: 20,000 paragraphs with 1,000 styles
    took about 490 s of CPU; the style names are now read once."""
    import copy

    import docx
    from docx.enum.style import WD_STYLE_TYPE

    word = docx.Document()
    style = word.styles.add_style("Style 0", WD_STYLE_TYPE.PARAGRAPH).element
    for i in range(1, MAX_DOCX_STYLES - len(word.styles) + 1):  # copies of one style (add_style is slow)
        more = copy.deepcopy(style)
        more.style_id, more.name_val = f"Style{i}", f"Style {i}"
        style.addnext(more)
    word.add_paragraph("A draft", style="Title")
    word.add_paragraph().add_run("Related work").bold = True
    word.add_paragraph("A paragraph says that retrieval works [1].")
    body = word.element.body.xpath("w:p")[-1]
    for _ in range(MAX_PARAGRAPHS - 3):
        body.addnext(copy.deepcopy(body))
    buffer = io.BytesIO()
    word.save(buffer)
    document, seconds = cpu_time(read_document, buffer.getvalue(), "draft.docx")
    assert len(word.styles) == MAX_DOCX_STYLES and document.title == "A draft"
    assert len(document.passages) == MAX_PARAGRAPHS - 2 and document.passages[0].section == "Related work"
    assert seconds < 4 * CPU_SECONDS, f"a Word file at the limits took {seconds:.1f} s of CPU"


WORD = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


@pytest.mark.parametrize("body, refused", [
    ("<x:p/>" * 25_000, "20,000 paragraphs"),     # the Word namespace under another prefix: once not counted
    ("<x:p>" + "<x:r><x:t>a</x:t></x:r>" * 120_000 + "</x:p>", "100,000 runs of text"),
    ("<x:p><x:r><x:rPr><x:b x:val='maybe'/></x:rPr><x:t>Heading</x:t></x:r></x:p>", "damaged"),
], ids=["paragraphs under another prefix", "runs", "a bold run of no known value"])
def test_hostile_word_files_are_refused_with_a_message(body, refused, tmp_path):
    xml = f'<?xml version="1.0"?><x:document xmlns:x="{WORD}"><x:body>{body}</x:body></x:document>'
    path = word_file(tmp_path / "draft.docx", xml.encode("utf-8"))
    with pytest.raises(DocumentError, match=refused):
        read_document(path.read_bytes(), "draft.docx")


def test_a_reference_list_is_read_once_for_all_paragraphs():
    """500 paragraphs citing by author and year against 1,250 references: each paragraph used to read the whole
    list again (1,000 against 2,500 took 70 s)."""
    def name(i: int) -> str:  # Baa, Bab, ...: a surname of its own for each reference
        return "B" + "".join("abcdefghijklmnopqrstuvwxyz"[i // 26 ** k % 26] for k in (2, 1, 0))

    paragraphs = [f"Paragraph {i} builds on the method of {name(i)} et al. (2010) and of {name(i)} (2011)."
                  for i in range(500)]
    references = [f"- {name(i)}, A. (2010). A study number {i}. Journal." for i in range(1_250)]
    text = "# Draft\n\n" + "\n\n".join(paragraphs) + "\n\n## References\n\n" + "\n".join(references) + "\n"
    document, seconds = cpu_time(_read, "a.md", text)
    assert seconds < 2 * CPU_SECONDS
    cited = [marker for passage in document.passages for marker in passage.markers if marker.references]
    assert len(cited) == 500 and cited[7].references == [7]


def test_only_the_cited_entries_of_a_large_bib_are_parsed():
    """A draft citing 3 of the 60,000 entries of a 12 MB .bib (a project may hold 16 MB): all were parsed, 20 s."""
    bib = large_bib(60_000)
    draft = "\\begin{document}\nGraphs help \\cite{key5,key59999}. See \\cite{KEY123}.\n\\end{document}"
    document, seconds = cpu_time(read_latex, draft, [bib])
    assert [(item.key, item.line) for item in document.references] == [("key5", 41), ("key59999", 479_993),
                                                                       ("key123", 985)]
    assert seconds < CPU_SECONDS


def _references_or_refusal(text: str):
    try:
        return parse_reference_list(text)
    except ValueError:  # over MAX_REFERENCES: refused, and its time is what is tested
        return None


# found by a hostile helper's audit of every pattern (docs/security.md, the fourth pass); CPU seconds before
@pytest.mark.parametrize("function, text", [
    (_references_or_refusal, "\\bibitem" + " " * 80_000),                          # 11 s: two \s* around an option
    (_references_or_refusal, "\\bibitem{" * 60_000),                               # 21 s: a key ran to the end
    (_references_or_refusal, "\\bibitem{k}x\n" * 40_000),                          # 24 s: lines counted per entry
    (_references_or_refusal, "".join(f"{i}. " + "arxiv" * 399 + "\n" for i in range(1, 401))),  # 14 s
    (_references_or_refusal, "@misc{k, title = {A title}, note = {arxiv" + " " * 32_000 + "x}}"),  # 39 s
    (check_reference_text, "".join(f"{i}. " + "a-" * 998 + "a\n" for i in range(1, 201))),  # 30 s: ids at every "a-"
    (citation_query_at_end, "\\" + "cite" * 10_000 + "\n\nWe use a model here.\n"),  # 13 s: LaTeX or not?
    (citation_query_at_end, "\\documentclass{article}\n\\title" + " " * 120_000 + "\n\nWe use a model here.\n"),
    (lambda text: body_sentences(text, "markdown"), "Intro text.\n\n# a" + " " * 2_000 + "x\n\nSome text.\n"),
    (lambda text: body_sentences(text, "latex"), "\\documentclass{article}\n\\begin{document}\nWe use it "
     + "\\\\cite[a " * 20_000 + "\n\n\\end{document}\n"),
    (lambda text: body_sentences(text, "latex"), "\\documentclass{article}\n\\begin{document}\nWe use it "
     + "\\cite{a} " * 160_000 + "here.\n\\end{document}\n"),  # 9 s: each citation cut out by copying the rest
], ids=["bibitem spaces", "bibitem braces", "bibitem lines", "arxiv words", "arxiv spaces in a note", "ids in words",
        "cite in one name", "title spaces", "heading spaces (language server)", "cite options (language server)",
        "citations in one sentence (language server)"])
def test_hostile_lists_and_sources_are_read_in_linear_time(function, text):
    _, seconds = cpu_time(function, text)
    assert seconds < CPU_SECONDS, f"took {seconds:.1f} s of CPU on {len(text):,} characters"


def test_a_citation_nested_past_the_parsers_depth_still_gives_a_query():
    text = "We rank papers " + "\\cite[a " * 1_250 + "here."
    assert citation_query(text, len(text) - 2).context


def test_bibliography_commands_and_white_space_of_a_project_are_read_in_linear_time(tmp_path):
    (tmp_path / "main.tex").write_text("\\documentclass{article}\n\\begin{document}\nText of the draft.\n"
                                       + " \n" * 300_000 + "More text of the draft.\n\\end{document}\n"
                                       + "\\bibliography{\n" * 16_000)  # 19 s and 5 s before
    document, seconds = cpu_time(read_document, tmp_path / "main.tex")
    assert seconds < CPU_SECONDS and [p.line for p in document.passages] == [3, 300_004]


def test_a_citation_query_in_a_long_hyphenated_word_is_answered_at_once():
    text = "We align sequences " + "Ab-" * 30 + "Ab! (2020) here [CIT] and more."
    query, seconds = cpu_time(citation_query, text, text.index("[CIT]"))
    assert seconds < CPU_SECONDS and "[CIT]" in query.context


def test_claim_cues_read_a_sentence_up_to_its_limit():
    scorer = ClaimScorer()
    _, seconds = cpu_time(scorer.features, "a-" * 100_000 + "B")
    assert seconds < CPU_SECONDS
    named = "BERT and GPT-3 were proposed by Devlin et al. "
    assert scorer.features(named)["named_method"] > 0
    assert scorer.features(named + "x" * 100_000)["named_method"] == scorer.features(named)["named_method"]


def test_long_reference_entries_are_cut():
    [item] = parse_reference_list("Smith, J. (2020). A title of the paper. " + "word " * 100_000)
    assert len(item.raw) <= MAX_ENTRY_CHARS and item.year == 2020 and item.title.startswith("A title")


def test_a_long_german_word_is_not_cut_into_a_compound():
    words = ["citation", "graph"]
    glossary = Glossary(words, np.eye(len(words), dtype=np.float32))
    (parts, seconds) = cpu_time(glossary.compound_parts, "Zitationsgraph" * 6_000, "de")
    assert parts == [] and seconds < CPU_SECONDS
    assert glossary.compound_parts("Zitationsgraph", "de") == ["zitation", "graph"]


def test_the_multilingual_encoder_reads_a_bounded_prefix():
    encoder = get_encoder("multilingual")
    start = "引文推荐方法基于图神经网络。" * 800
    head = start[:encoder.MAX_CHARS]
    vectors = encoder.encode([head, start + "完全不同的内容" * 20_000])
    assert np.allclose(vectors[0], vectors[1], atol=1e-6)
