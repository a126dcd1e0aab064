"""The vectors inside an angular Annoy file, read in place: the index keeps one copy of its embeddings.

Annoy stores every item's vector in its file: first one node per item (item i at byte i * node size), then the
nodes of the trees. An angular node (annoylib.h) is an int32 count of descendants, 8 bytes of children (or a
norm), then the vector as `dim` float32 values. `item_vectors` maps the item nodes and returns their vector parts
as a read-only (items x dim) float32 array with a row stride of one node, which numpy and BLAS use as they
would a contiguous matrix (the same products, bit for bit).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

NODE_HEADER_BYTES = 12  # n_descendants (int32) and two int32 children sharing their space with a float norm
FLOAT_BYTES = 4


def item_vectors(path: Path, dim: int, count: int, annoy) -> np.ndarray:
    """The `count` item vectors of the angular Annoy file at `path` (loaded as `annoy`), memory-mapped.

    Raises ValueError when the file is too small or when its layout is not the one described above (checked
    against Annoy's own reading of the first, middle and last item), so a future Annoy that stores items
    differently fails loudly instead of giving wrong vectors.
    """
    node = NODE_HEADER_BYTES + FLOAT_BYTES * dim
    size = Path(path).stat().st_size
    if count <= 0 or annoy.get_n_items() != count or size % node or size // node < count:
        raise ValueError(f"{Path(path).name}: {size} bytes do not hold {count} items of {dim} dimensions "
                         f"(Annoy reads {annoy.get_n_items()} items)")
    nodes = np.memmap(path, dtype=np.float32, mode="r", shape=(count, node // FLOAT_BYTES))
    vectors = nodes[:, NODE_HEADER_BYTES // FLOAT_BYTES:]
    for item in {0, count // 2, count - 1}:
        if not np.array_equal(vectors[item], np.asarray(annoy.get_item_vector(item), dtype=np.float32)):
            raise ValueError(f"{Path(path).name}: the items are not stored where this version of the engine "
                             f"reads them (item {item} differs from Annoy's own reading)")
    return vectors
