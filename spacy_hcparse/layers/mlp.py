"""The scorers' projections: a ReLU layer with dropout, applied to each block of a list.

Two kinds of dropout. ``fixed=False`` builds thinc's ``Dropout``, whose rate
``thinc.api.set_dropout_rate`` overwrites with the training's ``dropout`` at every update (what
every spaCy component does to its model): the architecture's own rate is then never used.
``fixed=True`` builds ``FixedDropout``, whose rate is read from its own attribute: the rate the
architecture names is the rate training applies (the graph model's parts use it).
"""
from typing import Callable, List, Tuple

from thinc.api import Model, Relu, chain, with_array
from thinc.types import Floats2d


def relu_projection(width: int, dropout: float, fixed: bool = False) -> Model[List[Floats2d], List[Floats2d]]:
    """``with_array(Relu(width) -> dropout)``; see the module docstring for ``fixed``."""
    if not fixed:
        return with_array(Relu(nO=width, dropout=dropout, normalize=False))
    return with_array(chain(Relu(nO=width, normalize=False), FixedDropout(dropout)))


def head_dep_model(name: str, forward: Callable, init: Callable, width: int, dropout: float, fixed: bool,
                   params: dict, dims: dict) -> Model:
    """A scorer over two ``relu_projection`` s of the encoder rows: ``layers[0]`` the head side,
    ``layers[1]`` the dependent side (the biaffine scorers' shape)."""
    layers = [relu_projection(width, dropout, fixed), relu_projection(width, dropout, fixed)]
    return Model(name, forward, init=init, layers=layers, params=params, dims=dims)


def FixedDropout(rate: float = 0.0) -> Model[Floats2d, Floats2d]:
    """Dropout at ``rate`` in training, untouched by ``set_dropout_rate``."""
    return Model("fixed_dropout", _forward, attrs={"rate": rate})


def _forward(model: Model, X: Floats2d, is_train: bool) -> Tuple[Floats2d, Callable]:
    rate = model.attrs["rate"]
    if not is_train or rate == 0:
        return X, lambda dY: dY
    mask = model.ops.get_dropout_mask(X.shape, rate)
    return X * mask, lambda dY: dY * mask
