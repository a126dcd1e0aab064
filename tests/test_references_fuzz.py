"""Fuzzing the reference-list parser with hypothesis.

Any text or bytes either parses into references or raises ValueError with a message for the user; and a
known list keeps its matches however a PDF viewer wraps, hyphenates, numbers or spaces it.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recommender.references.match import ReferenceIndex
from recommender.references.parse import ReferenceItem, parse_reference_list
from recommender.references.text import decode_reference_bytes
from support.corpora import REFERENCED_PAPERS

INDEX = ReferenceIndex(REFERENCED_PAPERS)

# Pieces of reference lists, so that generated text reaches the parser's branches, not only its first check.
PIECES = ["[1] ", "[2] ", "3. ", "(4) ", "\n", "\n\n", "-\n", "–\n", " ", ", ", ". ", ": ", "“", "”", "\"", "& ",
          " and ", "et al. ", "Smith, J., ", "J. Smith, ", "Jacob Devlin, ", "van der Berg, A. ", "(2019). ", "2019. ",
          "In Proceedings of ", "arXiv:1810.04805", "https://doi.org/10.1145/", "doi:10.18653/v1/", "recom-\nmendation ",
          "Long short-term memory", "Graph neural networks", "@article{x, title={", "}", "\\bibitem{a} ",
          "\\newblock ", "ﬁ", "\u00ad", "\u200b", "\t", "\r\n", "References\n", "14\n", "Ü", "中文", "\x00", "\x07"]
reference_like = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=12)), max_size=80).map("".join)


def parses_or_explains(parse) -> list[ReferenceItem] | None:
    """Run a parse; a ValueError must carry a sentence for the user, anything else fails the test."""
    try:
        items = parse()
    except ValueError as exc:
        message = str(exc)
        assert message[:1].isupper() and message.endswith(".") and len(message) > 30, message
        return None
    assert all(isinstance(item, ReferenceItem) for item in items)
    INDEX.match(items)
    return items


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=400), reference_like))
def test_any_text_parses_or_is_refused_with_a_message(text):
    parses_or_explains(lambda: parse_reference_list(text))


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.binary(max_size=2000), reference_like.map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_any_bytes_decode_or_are_refused_with_a_message(data):
    parses_or_explains(lambda: parse_reference_list(decode_reference_bytes(data)))


# One list per style: (entry, the corpus paper it cites or None). Entries start with an author list.
LISTS = {
    "acm": [
        ("Chandra Bhagavatula, Sergey Feldman, Russell Power, and Waleed Ammar. 2018. Content-Based Citation "
         "Recommendation. In Proceedings of NAACL-HLT. 238–251.", "cbcr"),
        ("Jacob Devlin, Ming-Wei Chang, Kenton Lee, and Kristina Toutanova. 2019. BERT: Pre-training of Deep "
         "Bidirectional Transformers for Language Understanding. In NAACL-HLT. 4171–4186.", "bert"),
        ("Jane Roe and Rita Doe. 2021. Neural ranking models for scholarly search engines. In Proceedings of "
         "JCDL. 1–10.", None),
        ("Sepp Hochreiter and Jürgen Schmidhuber. 1997. Long short-term memory. Neural Computation 9, 8 (1997), "
         "1735–1780. https://doi.org/10.1162/neco.1997.9.8.1735", "lstm"),
    ],
    "apa": [
        ("Dehghani, M., Zamani, H., Severyn, A., Kamps, J., & Croft, W. B. (2017). Neural ranking models with "
         "weak supervision. In Proceedings of SIGIR (pp. 65–74).", "nrm-weak"),
        ("Karpukhin, V., Oguz, B., Min, S., Lewis, P., Wu, L., Edunov, S., Chen, D., & Yih, W.-t. (2020). "
         "Dense passage retrieval for open-domain question answering. In Proceedings of EMNLP (pp. 6769–6781).",
         "dpr"),
        ("Liu, T.-Y. (2009). Learning to rank for information retrieval. Foundations and Trends in Information "
         "Retrieval, 3(3), 225–331.", "ltr"),
        ("Roe, J. (2020). Graph neural networks for citation recommendation. Scientometrics, 12(1), 1–20.", None),
    ],
    "ieee": [
        ("T.-Y. Liu, “Learning to rank for information retrieval,” Foundations and Trends in Information "
         "Retrieval, vol. 3, no. 3, pp. 225–331, 2009.", "ltr"),
        ("F. Scarselli, M. Gori, A. C. Tsoi, M. Hagenbuchner, and G. Monfardini, “Graph neural networks,” IEEE "
         "Trans. Neural Netw., vol. 20, no. 1, pp. 61–80, 2009.", "gnn"),
        ("J. Devlin, M.-W. Chang, K. Lee, and K. Toutanova, “Pretraining transformers,” arXiv:1810.04805, 2018.",
         "bert"),
        ("R. Doe, “Attention-based rankers for open-domain retrieval,” in Proc. SIGIR, 2022, pp. 1–10.", None),
    ],
    "nature": [
        ("Hochreiter, S. & Schmidhuber, J. Long short-term memory. Neural Comput. 9, 1735–1780 (1997).", "lstm"),
        ("Bhagavatula, C., Feldman, S., Power, R. & Ammar, W. Content-based citation recommendation. in Proc. "
         "NAACL-HLT 238–251 (2018).", "cbcr"),
        ("Mitra, B. & Craswell, N. Neural ranking models for search. Found. Trends Inf. Retr. 13, 1–126 (2018).",
         None),
    ],
}
NUMBERING = ["", "[{}] ", "{}. ", "({}) "]


def wrap(text: str, width: int, rng: random.Random) -> list[str]:
    """Greedy line breaking; a long word that does not fit is hyphenated half of the time."""
    lines, line = [], ""
    for word in text.split():
        room = width - len(line) - 1
        if len(word) <= room or not line:
            line = f"{line} {word}".strip()
            continue
        if word.isalpha() and len(word) >= 7 and room >= 4 and rng.random() < 0.5:
            cut = rng.randint(3, min(room - 1, len(word) - 3))
            lines.append(f"{line} {word[:cut]}-")
            line = word[cut:]
        else:
            lines.append(line)
            line = word
    return lines + [line]


@settings(max_examples=200, deadline=None)
@given(style=st.sampled_from(sorted(LISTS)), numbering=st.sampled_from(NUMBERING), width=st.integers(55, 110),
       blank_lines=st.booleans(), crlf=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_wrapped_renderings_of_a_list_keep_their_matches(style, numbering, width, blank_lines, crlf, seed):
    rng = random.Random(seed)
    lines = []
    for number, (entry, _) in enumerate(LISTS[style], start=1):
        lines += wrap(numbering.format(number) + entry, width, rng) + ([""] if blank_lines else [])
    text = ("\r\n" if crlf else "\n").join(lines)
    found = [INDEX.match_item(item) for item in parse_reference_list(text)]
    assert found == [{pid} if pid else set() for _, pid in LISTS[style]], text


@pytest.mark.parametrize("style", sorted(LISTS))
def test_the_lists_match_on_one_line_each(style):
    text = "\n".join(entry for entry, _ in LISTS[style])
    assert [INDEX.match_item(item) for item in parse_reference_list(text)] == \
        [{pid} if pid else set() for _, pid in LISTS[style]]
