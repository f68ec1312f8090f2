"""The tokenizer's character model: a dilated CNN over characters with a softmax per character.

Input: a ``Ragged`` of ``features.char_features`` rows (one sequence per text). Each character is
embedded (hashed lowercased code point, plus its class), projected to ``width``, then passes
through one residual block per entry of ``dilations`` (a ``dilated_window`` and a normalized
Maxout back to ``width``), so it sees ``sum(dilations)`` characters on each side. Output: a
(n_chars, len(LABELS)) array of label probabilities, rows in the input's order. Everything runs on
``model.ops``: no torch.
"""
from typing import Sequence

from thinc.api import Embed, HashEmbed, LayerNorm, Maxout, Model, Softmax, chain, concatenate, residual, with_array
from thinc.types import Floats2d, Ragged

from ..layers.dilated_window import dilated_window
from .features import LABELS, N_CLASSES


def build_char_model(width: int = 32, dilations: Sequence[int] = (1, 2, 4, 8), embed_rows: int = 2000,
                     class_width: int = 8, seed: int = 0) -> Model[Ragged, Floats2d]:
    """The character tagger (see module docstring).

    width (int): the width of every character vector.
    dilations (Sequence[int]): one residual window block per entry, with that dilation.
    embed_rows (int): rows of the hashed character embedding.
    class_width (int): width of the character-class embedding.
    seed (int): the hash seed of the character embedding.
    """
    if width < 1 or embed_rows < 1 or class_width < 1 or not dilations:
        raise ValueError("width, embed_rows and class_width must be positive and dilations not empty")
    embed = concatenate(
        HashEmbed(width, embed_rows, column=0, seed=seed),
        Embed(class_width, N_CLASSES, column=1),
    )
    project = chain(Maxout(width, width + class_width, nP=2, normalize=False), LayerNorm(width))
    blocks = [residual(chain(dilated_window(d), with_array(Maxout(width, 3 * width, nP=2, normalize=True))))
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
