"""``hc_parser``'s rehearsal: updates toward a frozen teacher's predictions on text without gold
(spaCy's ``nlp.resume_training()`` then ``nlp.rehearse(examples)``), as a mixin of ``GraphParser``:
the teacher's scores of the docs, its label scores on its own most likely heads, and the soft
targets' loss (``learning.rehearsal``) through the student's backprop."""
from copy import deepcopy
from typing import Dict, Iterable, Optional

import numpy as np
from spacy.training import Example, validate_examples
from thinc.api import Model, set_dropout_rate

from ..graph.scores import GraphInput
from ..learning.rehearsal import rehearsal_loss, teacher_heads
from ..models.graph_parser import tree_label_scores
from ..segment import sentence_spans
from .base import logger


class Rehearsal:
    """``rehearse`` for a parser pipe with a graph model, ``labels``, ``cfg``, ``max_length`` and
    ``model_threads`` (the BLAS and threads its model runs on)."""

    def rehearse(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd=None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """An update toward the teacher's predictions on the examples' predicted docs (no gold
        read), so that fine-tuning forgets less: heads, labels and sentence starts, soft targets
        (``learning.rehearsal``). The teacher is the copy of the model ``nlp.resume_training()``
        keeps; without one, the model as it is now (logged: take it before the first update).
        The loss goes under the component's name in ``losses``."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "GraphParser.rehearse")
        docs = [eg.predicted for eg in examples]
        if not any(len(doc) for doc in docs):
            return losses
        if self._rehearsal_model is None:
            logger.warning("[%s] rehearse: no teacher yet, the model as it is now becomes it (call "
                           "nlp.resume_training() before updating, so that the teacher is the trained model)",
                           self.name)
            self._rehearsal_model = deepcopy(self.model)
        spans = [sentence_spans(doc, self.max_length) if doc.has_annotation("SENT_START") else None for doc in docs]
        with self.model_threads():
            teacher = self._rehearsal_model.predict(GraphInput(docs, spans, factors=frozenset(), starts=True))
            teacher = teacher.to_numpy(self._rehearsal_model.ops)
            heads = teacher_heads(teacher)
            targets = tree_label_scores(self._rehearsal_model, teacher, heads)
            set_dropout_rate(self.model, drop)
            scores, backprop = self.model.begin_update(GraphInput(docs, teacher.spans, heads, frozenset()))
            loss, d_scores = rehearsal_loss(scores.to_numpy(self.model.ops), teacher, heads, targets,
                                            self._teacher_labels)
            backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    @property
    def _rehearsal_model(self) -> Optional[Model]:
        """The teacher of ``rehearse``: a frozen copy of the model (spaCy's
        ``Language.resume_training`` sets it on every component that has this attribute)."""
        return self.__dict__.get("_teacher")

    @_rehearsal_model.setter
    def _rehearsal_model(self, model: Optional[Model]) -> None:
        self._teacher = model
        unseen = set(self.cfg.get("unseen_labels", ()))  # the teacher never learned those
        known = [i for i, label in enumerate(self.labels) if label not in unseen]
        self._teacher_labels = np.array(known, dtype=np.int64)
