"""The tokenizer's model: a dilated CNN over a text's pieces (character runs) with a softmax per
piece.

Input: a ``Ragged`` of ``features.piece_features`` rows (one sequence per text). Each piece is
embedded (hashed lowercased piece, hashed first and last three characters, shape, surrounding
whitespace, whether the rule tokenizer ends a token there), projected to ``width``, then passes through one residual block per entry of
``dilations`` (a ``dilated_window`` and a normalized Maxout back to ``width``, with ``dropout`` in
training), so it sees ``sum(dilations)`` pieces on each
side. Output: a (n_pieces, len(LABELS)) array of label probabilities, rows in the input's order.
Everything runs on ``model.ops``: no torch.
"""
from typing import Sequence

from thinc.api import Embed, HashEmbed, LayerNorm, Maxout, Model, Softmax, chain, concatenate, residual, with_array
from thinc.types import Floats2d, Ragged

from ..layers.dilated_window import dilated_window
from .features import LABELS, N_GAPS, N_RULE_VALUES, N_SHAPES

SHAPE_WIDTH = 16
GAP_WIDTH = 8
RULE_WIDTH = 4


def build_char_model(width: int = 32, dilations: Sequence[int] = (1, 2, 4, 8), embed_rows: int = 2000,
                     dropout: float = 0.1, seed: int = 0) -> Model[Ragged, Floats2d]:
    """The character tagger (see module docstring).

    width (int): the width of every character vector.
    dilations (Sequence[int]): one residual window block per entry, with that dilation.
    embed_rows (int): rows of the hashed piece embedding (half as many for the first and last
        characters).
    dropout (float): dropout rate after each block in training.
    seed (int): the hash seed of the embeddings.
    """
    if width < 2 or embed_rows < 2 or not dilations:
        raise ValueError("width and embed_rows must be at least 2 and dilations not empty")
    embed = concatenate(
        HashEmbed(width, embed_rows, column=0, seed=seed),
        HashEmbed(width // 2, embed_rows // 2, column=1, seed=seed + 1),
        Embed(SHAPE_WIDTH, N_SHAPES, column=2),
        Embed(GAP_WIDTH, N_GAPS, column=3),
        HashEmbed(width // 2, embed_rows // 2, column=4, seed=seed + 2),
        Embed(RULE_WIDTH, N_RULE_VALUES, column=5),
    )
    n_in = width + 2 * (width // 2) + SHAPE_WIDTH + GAP_WIDTH + RULE_WIDTH
    project = chain(Maxout(width, n_in, nP=2, normalize=False), LayerNorm(width))
    blocks = [residual(chain(dilated_window(d), with_array(Maxout(width, 3 * width, nP=2, normalize=True, dropout=dropout))))
              for d in dilations]
    return chain(
        with_array(chain(embed, project)),
        *blocks,
        _ragged_data(),
        Softmax(len(LABELS), width),
    )


def _ragged_data() -> Model[Ragged, Floats2d]:
    """A Ragged's data array (its rows in order); backprop rebuilds the Ragged."""
    def forward(model, X: Ragged, is_train: bool):
        return X.dataXd, lambda dY: Ragged(dY, X.lengths)

    return Model("ragged_data", forward)
