"""Papers written for the tests: generated ones for builds, a reference-matching corpus, a corpus file to import."""
from __future__ import annotations

import json

from recommender.paper import Paper


def synthetic_papers(n: int, start: int = 0) -> list[Paper]:
    """Papers p{start} .. p{start+n-1} on six topics, with short texts: fast to embed, many of them."""
    topics = ["retrieval", "citation graphs", "protein folding", "image segmentation", "speech", "robotics"]
    return [Paper(id=f"p{i}", title=f"Study {i} of {topics[i % len(topics)]}",
                  abstract=f"We report experiment number {i} on {topics[i % len(topics)]} with method {i * 7 % 13}.",
                  authors=[f"Author {i % 11}"], year=2000 + i % 20) for i in range(start, start + n)]


# Papers that the reference lists of the reference tests cite (parsed, then matched against these).
REFERENCED_PAPERS = [
    Paper("dpr", title="Dense Passage Retrieval for Open-Domain Question Answering",
          authors=["Vladimir Karpukhin", "Barlas Oguz"], year=2020, extra={"doi": "10.18653/v1/2020.emnlp-main.550"}),
    Paper("10.1145/3331184.3331185", title="Some ACM Paper About Ranking", authors=["Ann Smith"], year=2019),
    Paper("ltr", title="Learning to Rank for Information Retrieval", authors=["Tie-Yan Liu"], year=2009),
    Paper("gnn", title="Graph Neural Networks", authors=["Franco Scarselli"], year=2009),
    Paper("attention", title="Attention", authors=["Rita Roe"], year=2016),
    Paper("uber", title="Über Méthodes de Recherche", authors=["Jean Dupont"], year=2017),
    Paper("nrm", title="Neural Ranking Models", authors=["Bhaskar Mitra"], year=2018),
    Paper("nrm-weak", title="Neural Ranking Models with Weak Supervision",
          authors=["Mostafa Dehghani", "Hamed Zamani"], year=2017),
    Paper("bert", title="BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
          authors=["Jacob Devlin", "Ming-Wei Chang", "Kenton Lee", "Kristina Toutanova"], year=2019,
          extra={"arxiv": "1810.04805"}),
    Paper("lstm", title="Long short-term memory", authors=["Sepp Hochreiter", "Jürgen Schmidhuber"], year=1997),
    Paper("cbcr", title="Content-Based Citation Recommendation",
          authors=["Chandra Bhagavatula", "Sergey Feldman", "Russell Power", "Waleed Ammar"], year=2018),
    Paper("bare", title="A Paper Whose Record Has No Authors or Year"),
]

# Two papers of a field the small corpus lacks (law), as a JSONL file a user imports on the Corpus page.
LAW_PAPERS = [
    {"id": "law1", "title": "Citation recommendation for court decisions",
     "abstract": "Judges cite precedents; we recommend them from the text of a draft decision.",
     "authors": ["Ruth Law"], "year": 2016, "venue": "ICAIL", "references": ["cite0"]},
    {"id": "law2", "title": "Retrieving statutes for legal questions", "authors": ["Ruth Law", "Tom Judge"],
     "year": 2017, "venue": "ICAIL", "references": ["law1"]}]
LAW_JSONL = "\n".join(json.dumps(r) for r in LAW_PAPERS).encode()
