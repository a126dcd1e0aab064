"""Papers written for the document tests: a Markdown draft on search and a laid-out PDF draft on vision, each
citing papers of the small index (and one paper no index holds)."""
from __future__ import annotations

from bench.pdf_writer import Draft

SEARCH = """---
title: Ranking for ad hoc search engines
---

## Abstract

We study ranking functions and learned rankers for search engines.

# Introduction

Term frequency and document length are weighted by BM25 [1]. Terms from the top documents can be added to the
query [2], a step that also helps recall [CIT].

Learned rankers build on older work [3].

We describe our setup next.

## References

1. Sparck Jones, K. (2010). Probabilistic relevance weighting with BM25. In SIGIR.
2. Salton, G., & Sparck Jones, K. (2011). Query expansion with pseudo relevance feedback. In SIGIR.
3. Nobody, A. (1999). A paper that no index holds. Nowhere.
"""

VISION = Draft(
    title="Learning visual recognition with little data",
    authors="Ann Example and Ben Sample",
    abstract="We train image classifiers and detectors from few labelled photographs.",
    sections=[("1 Introduction", [
        "Residual connections let very deep convolutional networks train well on large image collections, which "
        "made much deeper classifiers practical for many recognition tasks [1]. Objects in photographs are "
        "detected by classifying region proposals with a convolutional network [2].",
        "Random crops and flips reduce the overfitting of image classifiers trained on small datasets, and they "
        "remain the first thing to try when labelled photographs are scarce [3]."])],
    references=["[1] A. Turing and G. Hopper. 2010. Deep residual networks for image classification. In CVPR.",
                "[2] G. Hopper. 2011. Object detection with region proposals. In CVPR.",
                "[3] K. Goedel. 2013. Data augmentation for small image datasets. In ICCV."])
