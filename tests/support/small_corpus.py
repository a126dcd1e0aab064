"""A small, hand-written corpus for tests: four topics, repeated authors, a citation graph, dates."""

TOPICS = {
    "cite": [
        ("Neural citation recommendation from paper abstracts",
         "We embed the abstract of a draft with a neural encoder and recommend papers whose embeddings are nearest."),
        ("Context-aware citation recommendation with citation placeholders",
         "A passage with a citation placeholder is matched against candidate papers to suggest the reference."),
        ("Citation graph expansion for recommending references",
         "Candidates are expanded with the references of nearest neighbours in the citation graph, then reranked."),
        ("Author diversity in reference list recommendation",
         "A submodular objective selects references that are relevant and written by different authors."),
        ("Evaluating citation recommendation with recall and reciprocal rank",
         "We compare citation recommenders with mean reciprocal rank, recall at k and nDCG on held-out papers."),
        ("Reviewer support: finding citations missing from a submission",
         "Given a submission and its reference list, we suggest relevant papers the authors did not cite."),
    ],
    "ir": [
        ("Probabilistic relevance weighting with BM25",
         "The BM25 ranking function weights term frequency and document length for ad hoc retrieval."),
        ("Query expansion with pseudo relevance feedback",
         "Terms from the top retrieved documents are added to the query to improve recall in search engines."),
        ("Learning to rank documents with gradient boosted trees",
         "Ranking features such as BM25 scores and click data feed boosted regression trees optimising nDCG."),
        ("Dense passage retrieval with dual encoders",
         "Questions and passages are embedded by two transformer encoders and retrieved by inner product search."),
        ("Approximate nearest neighbour search with random projection trees",
         "A forest of random projection trees answers approximate nearest neighbour queries over embeddings."),
        ("Inverted index compression for fast search",
         "Posting lists of the inverted index are compressed with variable byte codes to speed up query processing."),
    ],
    "vision": [
        ("Deep residual networks for image classification",
         "Residual connections let very deep convolutional networks train well on ImageNet image classification."),
        ("Object detection with region proposals",
         "Region proposals are classified by a convolutional network to detect objects in photographs."),
        ("Semantic segmentation with fully convolutional networks",
         "Every pixel of an image is labelled by a fully convolutional network trained end to end."),
        ("Data augmentation for small image datasets",
         "Random crops, flips and colour jitter reduce overfitting of convolutional image classifiers."),
        ("Self-supervised visual representation learning",
         "Contrastive learning on augmented image pairs yields visual features without manual labels."),
        ("Image captioning with attention",
         "An attention mechanism over convolutional features generates captions describing images."),
    ],
    "bio": [
        ("Protein structure prediction with deep learning",
         "A neural network predicts the three-dimensional structure of proteins from amino acid sequences."),
        ("Gene expression clustering in cancer samples",
         "Hierarchical clustering of microarray gene expression reveals subtypes of tumours."),
        ("Sequence alignment with dynamic programming",
         "Local alignment of DNA and protein sequences is computed with a dynamic programming recurrence."),
        ("Predicting drug and target interactions",
         "Chemical structure and protein sequence features predict which drugs bind which protein targets."),
        ("Single-cell RNA sequencing analysis",
         "Transcriptomes of individual cells are normalised, clustered and annotated into cell types."),
        ("Phylogenetic tree inference with maximum likelihood",
         "Evolutionary trees of species are inferred from aligned sequences by maximum likelihood."),
    ],
}

AUTHORS = {
    "cite": [["Ada Lovelace", "Alan Turing"], ["Ada Lovelace"], ["Ada Lovelace", "Grace Hopper"],
             ["Kurt Goedel"], ["Emmy Noether", "Ada Lovelace"], ["John von Neumann"]],
    "ir": [["Karen Sparck Jones"], ["Gerard Salton", "Karen Sparck Jones"], ["Tie-Yan Liu"],
           ["Vladimir Karpukhin", "Barlas Oguz"], ["Erik Bernhardsson"], ["Justin Zobel", "Alistair Moffat"]],
    "vision": [["Kaiming He"], ["Ross Girshick"], ["Jonathan Long"], ["Alex Krizhevsky"], ["Ting Chen"],
               ["Kelvin Xu"]],
    "bio": [["John Jumper"], ["Michael Eisen"], ["Temple Smith", "Michael Waterman"], ["Yoshihiro Yamanishi"],
            ["Aviv Regev"], ["Joseph Felsenstein"]],
}


def small_corpus() -> list[dict]:
    """24 papers in JSONL-record form; within each topic later papers cite earlier ones."""
    records = []
    for topic, papers in TOPICS.items():
        for i, (title, abstract) in enumerate(papers):
            year = 2010 + i
            records.append({
                "id": f"{topic}{i}",
                "title": title,
                "abstract": abstract,
                "authors": AUTHORS[topic][i],
                "venue": {"cite": "JCDL", "ir": "SIGIR", "vision": "CVPR", "bio": "Bioinformatics"}[topic],
                "year": year,
                "date": f"{year}-06-01",
                "references": [f"{topic}{j}" for j in range(i)][-3:],
                "doi": f"10.9999/{topic}.{i}",
            })
    return records
