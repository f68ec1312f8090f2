"""``hc_transition_parser``: arc-standard shift-reduce parser (averaged perceptron or neural).

Data flows one way: Doc -> spans (``segment.sentence_spans``) -> the learner for the model's kind
(``components.transition_learners``): word attribute rows -> the perceptron model's tagging and
search, or token vectors -> the neural model's step scorer -> greedy search, valid moves only ->
span trees (index 0 the root) -> ``write_trees`` -> ``nonproj.deprojectivize``. ``predict``
returns the trees and leaves Docs alone; ``set_annotations`` writes them.

Non-projective gold trees are lifted with spaCy's own pseudo-projective transform
(``Example.get_aligned_parse(projectivize=True)``, labels decorated ``head||dep``); decorated
labels rarer than ``label_freq_cutoff`` in the training data fall back to their plain label
(``components.projective_gold``). At prediction, ``nonproj.deprojectivize`` undoes the lifting.

``initial_heads(pipe, doc, max_length)`` hands this parser's trees to ``hc_parser`` as starts for
hill climbing.
"""
from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.pipeline._parser_internals import nonproj
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model

from ..models.transition import SpanTree
from ..segment import Span, sentence_spans
from ..transition.moves import n_classes
from .annotate import write_trees
from .base import ParserPipe, aligned_gold, copy_gold_sentences
from .projective_gold import DECORATION, ROOT_LABEL, lifted_labels, span_gold
from .transition_learners import LEARNERS, SpanGold, TransitionLearner

FALLBACK_LABEL = "dep"  # words need a label other than ROOT to attach to each other

DEFAULT_MODEL = """
[model]
@architectures = "spacy_hcparse.TransitionModel.v1"
templates = "zhang_nivre"
n_buckets = 4194304
tag_buckets = 1048576
max_length = 200
"""


@Language.factory(
    "hc_transition_parser",
    assigns=["token.dep", "token.head", "token.is_sent_start", "doc.sents"],
    default_config={
        "model": Config().from_str(DEFAULT_MODEL)["model"],
        "beam_width": 1,
        "train_beam_width": 1,
        "train_explore": 0.0,
        "explore_after": 0,
        "explore_max_length": 60,
        "label_freq_cutoff": 30,
        "scorer": {"@scorers": "spacy_hcparse.parser_scorer.v1"},
    },
    default_score_weights={
        "dep_uas": 0.5,
        "dep_las": 0.5,
        "dep_las_per_type": None,
        "sents_p": None,
        "sents_r": None,
        "sents_f": 0.0,
        "ud_uas": None,
        "ud_las": None,
        "ud_las_per_type": None,
    },
)
def make_transition_parser(
    nlp: Language,
    name: str,
    model: Model,
    beam_width: int,
    train_beam_width: int,
    train_explore: float,
    explore_after: int,
    explore_max_length: int,
    label_freq_cutoff: int,
    scorer: Optional[Callable],
) -> "TransitionParser":
    return TransitionParser(
        nlp.vocab,
        model,
        name,
        beam_width=beam_width,
        train_beam_width=train_beam_width,
        train_explore=train_explore,
        explore_after=explore_after,
        explore_max_length=explore_max_length,
        label_freq_cutoff=label_freq_cutoff,
        scorer=scorer,
    )


class TransitionParser(ParserPipe):
    """Arc-standard parser; the model's kind (``attrs["kind"]``) picks the learner once
    (``transition_learners.PerceptronLearner`` or ``NeuralLearner``), which parses and trains.

    beam_width: beam search width at prediction for the perceptron (1 = greedy).
    train_beam_width: perceptron training with beam search and early update when > 1 (global
        training, which is what makes a wide beam at prediction pay off); 1 = greedy training with
        the ultraconservative update.
    train_explore: greedy perceptron training with error exploration: the probability of following
        a wrong prediction (0 = always follow the static oracle). Once a wrong move is followed,
        the dynamic oracle (``transition.dynamic_oracle``) names the correct moves.
    explore_after: training words seen (counted from the start of training) before exploring.
    explore_max_length: sentences longer than this are trained without exploration.
    label_freq_cutoff: decorated (lifted) labels seen fewer times in initialization are replaced
        by their plain label.
    """

    SETTINGS = ("beam_width", "train_beam_width", "train_explore", "explore_after", "explore_max_length")

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "hc_transition_parser",
        *,
        beam_width: int = 1,
        train_beam_width: int = 1,
        train_explore: float = 0.0,
        explore_after: int = 0,
        explore_max_length: int = 60,
        label_freq_cutoff: int = 30,
        scorer: Optional[Callable] = None,
    ) -> None:
        for key, value in (("beam_width", beam_width), ("train_beam_width", train_beam_width)):
            if value < 1:
                raise ValueError(f"[hc_transition_parser] {key} must be at least 1, got {value}")
        if not 0.0 <= train_explore <= 1.0:
            raise ValueError(f"[hc_transition_parser] train_explore must be in [0, 1], got {train_explore}")
        kind = model.attrs.get("kind")
        if kind not in LEARNERS:
            raise ValueError(f"[hc_transition_parser] model {model.name!r} is not a transition model (kind={kind!r})")
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg: Dict = {
            "labels": [],
            "tags": [],
            "beam_width": beam_width,
            "train_beam_width": train_beam_width,
            "train_explore": train_explore,
            "explore_after": explore_after,
            "explore_max_length": explore_max_length,
            "label_freq_cutoff": label_freq_cutoff,
        }
        # cfg is shared with the learner, which reads it at every call (loading updates it in place)
        self.learner: TransitionLearner = LEARNERS[kind](model, self.cfg, vocab)

    # ----- set-up -------------------------------------------------------------------------
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[List[str]] = None,
    ) -> None:
        validate_get_examples(get_examples, "TransitionParser.initialize")
        if labels is None:
            labels = lifted_labels(get_examples(), self.cfg["label_freq_cutoff"])
        labels = [label for label in labels if label != ROOT_LABEL] or [FALLBACK_LABEL]
        for label in [ROOT_LABEL, *labels]:
            self.add_label(label)
        self.model.set_dim("nO", n_classes(len(self.labels)))
        if self.learner.uses_tags:
            self.cfg["tags"] = sorted({t.tag_ for eg in get_examples() for t in eg.reference if t.tag_})
            for tag in self.cfg["tags"]:
                self.vocab.strings.add(tag)
        self.learner.initialize([eg.predicted for eg in islice(get_examples(), 10)])

    # ----- prediction ---------------------------------------------------------------------
    def predict(self, docs: Iterable[Doc]) -> List[List[SpanTree]]:
        """One list of span trees per doc, one per span of ``sentence_spans(doc, max_length)``."""
        docs = list(docs)
        return self.parse_spans(docs, [sentence_spans(doc, self.max_length) for doc in docs])

    def parse_spans(self, docs: Sequence[Doc], spans: Sequence[Sequence[Span]]) -> List[List[SpanTree]]:
        """Parse the given spans of each doc (projective trees, labels possibly decorated)."""
        if not any(spans):
            return [[] for _ in docs]
        flat = self.learner.parse(docs, spans)
        out, pos = [], 0
        for doc_spans in spans:
            out.append(flat[pos : pos + len(doc_spans)])
            pos += len(doc_spans)
        return out

    def set_annotations(self, docs: Iterable[Doc], parses: List[List[SpanTree]]) -> None:
        for doc, doc_parses in zip(docs, parses):
            spans = sentence_spans(doc, self.max_length)
            if spans:
                self.write_parses(doc, spans, doc_parses)

    def write_parses(self, doc: Doc, spans: Sequence[Span], parses: Sequence[SpanTree]) -> None:
        """Write the trees of ``spans`` (from ``parse_spans``) into ``doc``, lifted arcs restored."""
        labels = self.labels
        names = [[labels[i] for i in labels_ids] for _, labels_ids in parses]
        write_trees(doc, spans, [heads for heads, _ in parses], names)
        if any(DECORATION in name for span_names in names for name in span_names):
            nonproj.deprojectivize(doc)

    # ----- training -----------------------------------------------------------------------
    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd=None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "TransitionParser.update")
        if ROOT_LABEL not in self.labels:
            raise ValueError(f"[{self.name}] update() before initialize(): the component has no labels yet")
        docs, spans, golds = self._gold_spans(examples)
        if any(spans):
            losses[self.name] += self.learner.update(docs, spans, golds, drop, sgd)
        return losses

    def get_loss(self, examples: Iterable[Example], scores) -> Tuple[float, object]:
        """Not used: the learner walks the oracle's configurations inside ``update``."""
        raise NotImplementedError("hc_transition_parser computes its loss inside update()")

    def finish_update(self, sgd) -> None:
        self.learner.finish_update(sgd)

    def _gold_spans(self, examples: List[Example]) -> Tuple[List[Doc], List[List[Span]], List[SpanGold]]:
        """The predicted docs, per doc its spans with a usable projective gold tree, and those
        trees, one ``SpanGold`` per span in order."""
        label_ids = {label: i for i, label in enumerate(self.labels)}
        tag_ids = {tag: i for i, tag in enumerate(self.cfg["tags"])}
        root = label_ids[ROOT_LABEL]
        docs, spans, golds = [], [], []
        for eg in examples:
            doc = eg.predicted
            copy_gold_sentences(eg)
            heads, deps, tags = aligned_gold(eg, projectivize=True, tags=bool(tag_ids))
            tags = tags if tag_ids else [None] * len(doc)
            tags = np.array([tag_ids.get(t, -1) if t else -1 for t in tags], dtype=np.int64)
            absolute = np.array([-1 if h is None else h for h in heads], dtype=np.int64)
            doc_spans = []
            for start, end in sentence_spans(doc, self.max_length):
                gold = span_gold(absolute, deps, start, end, label_ids, root)
                if gold is None:
                    self._report_unusable_gold(doc, start, end, heads)
                    continue
                doc_spans.append((start, end))
                golds.append((*gold, np.concatenate([[-1], tags[start:end]])))
            docs.append(doc)
            spans.append(doc_spans)
        return docs, spans, golds

    # ----- serialization ------------------------------------------------------------------
    def _before_save(self) -> None:
        self.learner.before_save()  # e.g. the perceptron's averaged weights into the model
        super()._before_save()

    def _after_load(self, where: str) -> None:
        self.learner.after_load()
        expected = n_classes(len(self.labels))
        if self.model.has_dim("nO") and self.model.get_dim("nO") not in (None, expected):
            raise ValueError(
                f"[hc_transition_parser] model in {where} has {self.model.get_dim('nO')} move classes but "
                f"its cfg lists {len(self.labels)} labels ({expected} classes): the files do not belong together"
            )


def initial_heads(pipe: TransitionParser, doc: Doc, max_length: int) -> List[np.ndarray]:
    """This parser's trees for ``sentence_spans(doc, max_length)``, as span-local (n+1,) heads
    arrays (``heads[0] == -1``, one word on the root), de-projectivized, for ``hc_parser``'s
    hill climbing. ``doc`` is left untouched."""
    spans = sentence_spans(doc, max_length)
    if not spans:
        return []
    parses = pipe.parse_spans([doc], [spans])[0]
    copy = Doc(doc.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc])
    pipe.write_parses(copy, spans, parses)
    out = []
    for start, end in spans:
        heads = np.full(end - start + 1, -1, dtype=np.int64)
        for m, token in enumerate(copy[start:end], start=1):
            heads[m] = 0 if token.head.i == token.i else token.head.i - start + 1
        out.append(heads)
    return out
