"""Registered callbacks for training configs (``registry.callbacks``)."""
from typing import Callable, List

from spacy.language import Language
from spacy.util import registry


@registry.callbacks("spacy_hcparse.initialize_frozen.v1")
def make_initialize_frozen(components: List[str]) -> Callable[[Language], Language]:
    """An ``[initialize] before_init`` callback that initializes the named components, which
    ``[training] frozen_components`` names too: spaCy initializes no frozen component, so a frozen
    pretrained ``transformer`` would otherwise never load its weights nor tell its listeners their
    width. Initialized with no examples (a component that needs some cannot be frozen this way).
    spaCy disables frozen components while it initializes, so the listeners are linked here over
    all of ``nlp.components``, not the enabled pipeline."""

    def initialize_frozen(nlp: Language) -> Language:
        for name in components:
            pipe = nlp.get_pipe(name)
            pipe.initialize(lambda: [], nlp=nlp)
            if hasattr(pipe, "find_listeners"):
                for _, other in nlp.components:
                    pipe.find_listeners(other)
        return nlp

    return initialize_frozen
