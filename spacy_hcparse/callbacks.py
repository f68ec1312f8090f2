"""Registered callbacks for training configs (``registry.callbacks``)."""
from typing import Any, Callable, Dict, Hashable, List

from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import registry


@registry.callbacks("spacy_hcparse.initialize_frozen.v1")
def make_initialize_frozen(components: List[str], cache_outputs: bool = False) -> Callable[[Language], Language]:
    """An ``[initialize] before_init`` callback that initializes the named components, which
    ``[training] frozen_components`` names too: spaCy initializes no frozen component, so a frozen
    pretrained ``transformer`` would otherwise never load its weights nor tell its listeners their
    width. Initialized with no examples (a component that needs some cannot be frozen this way).
    spaCy disables frozen components while it initializes, so the listeners are linked here over
    all of ``nlp.components``, not the enabled pipeline.

    cache_outputs: also remember, for this training process only, what each named component
        writes for a doc (``doc._.trf_data`` for a ``transformer``), keyed by the doc's text and
        token boundaries: a frozen component gives the same output for the same doc every epoch,
        so the training and dev docs go through it once. The saved pipeline is unchanged: the cache lives on the
        component object of the training process, never on disk.
    """

    def initialize_frozen(nlp: Language) -> Language:
        for name in components:
            pipe = nlp.get_pipe(name)
            pipe.initialize(lambda: [], nlp=nlp)
            if hasattr(pipe, "find_listeners"):
                for _, other in nlp.components:
                    pipe.find_listeners(other)
            if cache_outputs:
                _cache_transformer_outputs(pipe)
        return nlp

    return initialize_frozen


def _doc_key(doc: Doc) -> Hashable:
    return doc.text, tuple(token.idx for token in doc)


def _cache_transformer_outputs(pipe: Any) -> None:
    """Make ``pipe.predict``/``pipe.set_annotations`` (a spacy-transformers ``Transformer``) run
    the model only on docs it has not seen; ``set_extra_annotations`` is not called for cached
    output (the frozen configs use the null setter)."""
    if not hasattr(pipe, "predict") or not hasattr(pipe, "set_annotations"):
        raise ValueError(f"cache_outputs: {type(pipe).__name__} has no predict/set_annotations")
    store: Dict[Hashable, Any] = {}
    predict = pipe.predict

    def cached_predict(docs: List[Doc]) -> List[Any]:
        docs = list(docs)
        keys = [_doc_key(doc) for doc in docs]
        new = {key: doc for key, doc in zip(keys, docs) if key not in store}
        if new:
            store.update(zip(new, predict(list(new.values())).doc_data))
        return [store[key] for key in keys]

    def set_cached(docs: List[Doc], outputs: List[Any]) -> None:
        for doc, data in zip(docs, outputs):
            doc._.trf_data = data

    pipe.predict = cached_predict
    pipe.set_annotations = set_cached
