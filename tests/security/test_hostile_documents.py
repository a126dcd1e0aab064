"""Hostile documents through `python -m recommender review` and `contexts` (issue 25): each one ends bounded, in
exit code, message, time and the process's own peak memory, and no file outside the upload is ever read.

The bounds are generous ceilings (a regression to unbounded work blows far past them); the measured values are in
docs/security.md (`python -m bench.attacks`).
"""
from __future__ import annotations

import json
import zipfile

import pytest

from bench import hostile
from recommender.documents.limits import MAX_CLAIMS, MAX_INCLUDES, MAX_PLACES, MAX_TEXT_CHARS
from recommender.documents.project import OUTSIDE_NOTICE
from recommender.documents.read import read_document

REFUSED_S, REFUSED_MB = 10, 500  # a refused upload: its message within seconds, little memory
REVIEWED_S, REVIEWED_MB = 60, 1024  # a review that runs (the model loaded)


@pytest.fixture
def secret(tmp_path):
    return hostile.canary(tmp_path / "server")


def _answered(outcome: hostile.Outcome) -> dict:
    assert outcome.code == 0, outcome.err[-2000:]
    assert outcome.seconds < REVIEWED_S and outcome.peak_mb < REVIEWED_MB, outcome
    return json.loads(outcome.out)


def _refused(outcome: hostile.Outcome, *words: str) -> str:
    assert outcome.code == 2, outcome.err[-2000:]
    assert outcome.seconds < REFUSED_S and outcome.peak_mb < REFUSED_MB, outcome
    message = outcome.err.strip().splitlines()[-1]
    assert message.startswith("error: ") and all(word in message for word in words), message
    return message


def test_a_file_that_inputs_itself_is_read_once(tmp_path, small_index):
    review = _answered(hostile.review(hostile.recursion_bomb(tmp_path), small_index))
    assert "a.tex includes itself (through \\input); it was read once." in review["notices"]
    assert len(json.dumps(review)) < 100_000


def test_a_tree_of_includes_stops_at_its_limit(tmp_path, small_index):
    review = _answered(hostile.review(hostile.include_tree(tmp_path), small_index))
    assert f"Only the first {MAX_INCLUDES} \\input and \\include commands were followed." in review["notices"]


def test_the_expanded_text_is_capped_while_expanding(tmp_path, small_index):
    part = (hostile.SENTENCE + "\n") * (MAX_TEXT_CHARS // len(hostile.SENTENCE) // 2 + 10)  # half the limit
    path = tmp_path / "halves.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("main.tex", "\\documentclass{article}\\begin{document}\n\\input{part}\n\\input{part}\n"
                                     "\\input{part}\n\\end{document}\n")
        archive.writestr("part.tex", part)
    _refused(hostile.review(path, small_index), "over 2,000,000 characters", "\\input files included")


def test_includes_outside_the_folder_are_never_read(tmp_path, small_index, secret):
    path, token = secret
    document = hostile.outside_includes(tmp_path / "upload" / "a" / "b", path)
    outcome = hostile.review(document, small_index)
    review = _answered(outcome)
    assert token not in outcome.out + outcome.err
    assert OUTSIDE_NOTICE in review["notices"] and "/etc" not in json.dumps(review["notices"])
    text = hostile.measured("recommender", "review", str(document), "--index", str(small_index))
    assert text.code == 0 and token not in text.out + text.err
    allowed = hostile.review(document, small_index, "--includes-outside")  # the command line's explicit choice
    assert allowed.code == 0 and token in allowed.out


def test_includes_outside_a_zipped_project_are_never_read(tmp_path, small_index, secret):
    path, token = secret
    outcome = hostile.review(hostile.outside_includes_zip(tmp_path, path), small_index)
    assert OUTSIDE_NOTICE in _answered(outcome)["notices"]
    assert token not in outcome.out + outcome.err


def test_contexts_never_read_outside_the_folder(tmp_path, small_index, secret):
    path, token = secret
    folder = tmp_path / "papers"
    hostile.outside_includes(folder, path)
    out = tmp_path / "contexts.jsonl"
    outcome = hostile.measured("recommender", "contexts", "--index", str(small_index), str(folder / "main.tex"),
                               "-o", str(out))
    assert token not in outcome.out + outcome.err
    assert not out.exists() or token not in out.read_text(encoding="utf-8")
    assert OUTSIDE_NOTICE in outcome.err or outcome.code == 2


def test_the_outside_notice_does_not_tell_whether_a_path_exists(tmp_path, secret):
    path, _ = secret
    notices = []
    for target in (path.resolve(), path.parent / "no-such-file.tex", "/etc/hostname", "/no/such/dir/x"):
        (tmp_path / "main.tex").write_text(f"Text {hostile.SENTENCE}\n\n\\input{{{target}}}\n", encoding="utf-8")
        notices.append(read_document(tmp_path / "main.tex").notices)
    assert all(found == [OUTSIDE_NOTICE] for found in notices), notices


def test_a_link_inside_the_folder_to_a_file_inside_it_is_followed(tmp_path):
    (tmp_path / "sections").mkdir()
    (tmp_path / "sections" / "intro.tex").write_text("The linked section holds this sentence.\n", encoding="utf-8")
    (tmp_path / "intro.tex").symlink_to(tmp_path / "sections" / "intro.tex")
    (tmp_path / "main.tex").write_text("\\documentclass{article}\\begin{document}\n\\input{intro}\n"
                                       "\\input{sections/../sections/intro}\n\\end{document}\n", encoding="utf-8")
    document = read_document(tmp_path / "main.tex")
    assert "linked section" in document.passages[0].text and not document.notices


def test_one_thousand_citations_in_one_paragraph(tmp_path, small_index):
    review = _answered(hostile.review(hostile.many_citations(tmp_path), small_index))
    assert len(review["places"]) == 1000
    assert sum(bool(place["recommendations"]) for place in review["places"]) == MAX_PLACES
    assert any(f"the first {MAX_PLACES}" in notice for notice in review["notices"])


def test_a_small_archive_of_a_huge_tex_is_refused_while_unpacking(tmp_path, small_index):
    _refused(hostile.review(hostile.big_tex_archive(tmp_path), small_index), ".tex files", "4 MB")


def test_markdown_just_under_the_upload_limit_is_refused_by_its_text(tmp_path, small_index):
    _refused(hostile.review(hostile.big_markdown(tmp_path), small_index), "text", "2,000,000 characters")


def test_a_word_file_whose_text_unpacks_to_gigabytes_is_refused(tmp_path, small_index):
    _refused(hostile.review(hostile.docx_text_bomb(tmp_path, megabytes=400), small_index), "unpacks to", "100 MB")


def test_a_word_file_of_millions_of_paragraphs_is_refused(tmp_path, small_index):
    _refused(hostile.review(hostile.docx_many_paragraphs(tmp_path), small_index), "20,000 paragraphs")


def test_a_document_of_thousands_of_claims_lists_the_likeliest(tmp_path, small_index):
    path = tmp_path / "claims.md"
    path.write_text("# Claims\n\n" + "\n\n".join(f"Previous studies have shown that graph model {i} improves "
                                                 "citation recommendation." for i in range(2000)), encoding="utf-8")
    review = _answered(hostile.review(path, small_index))
    assert len(review["uncited"]) == MAX_CLAIMS
    assert "2,000 sentences read like uncited claims; the 300 likeliest are listed." in review["notices"]
