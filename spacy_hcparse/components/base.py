"""What both parser components share: a label list in ``cfg``, span length, guarded loading,
a format stamp on saved models, and reports of training sentences that cannot be learned (the
gold itself is prepared in ``learning.gold``)."""
import copy
import logging
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import srsly
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples
from thinc.api import Model

from .. import __version__
from ..learning.gold import gold_problem

# Bumped whenever saved weights or cfg keys change meaning; a model saved with another format is
# refused at load with a message naming the file. Models saved before the stamp existed carry no
# format and are read as format 1.
MODEL_FORMAT = 2

logger = logging.getLogger("spacy_hcparse")


class ParserPipe(TrainablePipe):
    """A TrainablePipe whose labels live in ``cfg["labels"]`` and whose model has ``max_length``.

    Saving stamps ``cfg`` with ``hcparse_version`` and ``model_format``. Settings named in
    ``SETTINGS`` (the factory's search and training options) keep the values the component was
    built with when a saved ``cfg`` is loaded: the pipeline's config is where a user sets them
    (``spacy.load(path, config={"components": {"hc_parser": {"decoder": {"@misc": "spacy_hcparse.Dual.v1"}}}})``), and the
    saved ``cfg`` holds what was learned (labels, tags). Loading checks that the
    ``cfg`` and ``model`` files exist and parse, that the format matches ``MODEL_FORMAT``, and
    wraps any other failure in a ``ValueError`` naming the component and the file; then it calls
    ``_after_load(where)``, where subclasses check that the weights fit the label set.
    """

    SETTINGS: Tuple[str, ...] = ()

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.cfg["labels"])

    def add_label(self, label: str) -> int:
        """Add ``label`` at the end of the label set (1), or nothing if it is there (0). Once the
        model has its label outputs, ``_grow_labels`` resizes it first."""
        if label in self.cfg["labels"]:
            return 0
        if self.model.has_dim("nO") and self.model.get_dim("nO") is not None:
            self._grow_labels(label)
        self.cfg["labels"].append(label)
        self.vocab.strings.add(label)
        return 1

    @property
    def _rehearsal_model(self) -> Optional[Model]:
        """The teacher of ``rehearse``: a frozen copy of the model (spaCy's
        ``Language.resume_training`` sets it on every component that has this attribute)."""
        return self.__dict__.get("_teacher_model")

    @_rehearsal_model.setter
    def _rehearsal_model(self, model: Optional[Model]) -> None:
        self._teacher_model = model
        self._teacher_changed(model)

    def _training_step(self, examples: Iterable[Example], losses: Optional[Dict[str, float]], method: str
                       ) -> Tuple[List[Example], Dict[str, float]]:
        """The examples of an ``update`` or ``rehearse`` (``method``) as a list, validated, and
        ``losses`` (a new dict for None) with this component's entry."""
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.{method}")
        return examples, losses

    def _teacher_changed(self, model: Optional[Model]) -> None:
        """What a subclass keeps of a new teacher model (None: no teacher)."""

    def _teacher(self) -> Model:
        """The teacher model; without one, a copy of the model as it is now (logged: the teacher
        should be the trained model, taken by ``nlp.resume_training()`` before any update)."""
        if self._rehearsal_model is None:
            logger.warning("[%s] rehearse: no teacher yet, the model as it is now becomes it (call "
                           "nlp.resume_training() before updating, so that the teacher is the trained model)",
                           self.name)
            self._rehearsal_model = self._model_copy()
        return self._rehearsal_model

    def _model_copy(self) -> Model:
        """A copy of the model as it is now (the teacher ``_teacher`` takes without one)."""
        return copy.deepcopy(self.model)

    def _grow_labels(self, label: str) -> None:
        """Make room in the initialized model for ``label``, about to be appended to the labels
        (subclasses whose model can grow override it)."""
        raise ValueError(f"[{self.name}] cannot add label {label!r} after the model was initialized")

    @property
    def max_length(self) -> int:
        """Longest span parsed as one tree (see ``segment.sentence_spans``)."""
        return int(self.model.attrs["max_length"])

    def load_trained(self, pipeline_dir: str) -> None:
        """Weights and labels of the same-named component of a trained pipeline directory; this
        component's ``SETTINGS`` stay as they are (see ``from_disk``)."""
        path = Path(pipeline_dir) / self.name
        if not path.is_dir():
            raise ValueError(f"[{self.name}] {pipeline_dir} has no trained {self.name!r} component (no {path})")
        self.from_disk(path, exclude=["vocab"])  # the pipeline's vocab is this one's
        for label in self.labels:
            self.vocab.strings.add(label)

    # ----- serialization --------------------------------------------------------------------
    def _before_save(self) -> None:
        """Bring ``cfg`` and the weights up to date before serializing (subclasses extend it)."""
        self.cfg["hcparse_version"] = __version__
        self.cfg["model_format"] = MODEL_FORMAT

    def to_bytes(self, *, exclude=tuple()):
        self._before_save()
        return super().to_bytes(exclude=exclude)

    def to_disk(self, path, *, exclude=tuple()):
        self._before_save()
        return super().to_disk(path, exclude=exclude)

    def from_bytes(self, bytes_data, *, exclude=tuple()):
        try:
            msg = srsly.msgpack_loads(bytes_data)
            cfg = srsly.json_loads(msg["cfg"]) if "cfg" in msg else {}
        except Exception as err:
            raise ValueError(f"[{self.name}] could not read the serialized component: {err}") from err
        self._check_format(cfg, "bytes")
        return self._load(lambda: super(ParserPipe, self).from_bytes(bytes_data, exclude=exclude), "bytes",
                          "the model from bytes")

    def from_disk(self, path, *, exclude=tuple()):
        path = Path(path)
        for name in ("cfg", "model"):
            if name not in exclude and not (path / name).is_file():
                raise ValueError(f"[{self.name}] missing file {path / name}: the saved model is incomplete")
        if "cfg" not in exclude:
            try:
                cfg = srsly.read_json(path / "cfg")
            except Exception as err:
                raise ValueError(f"[{self.name}] corrupt file {path / 'cfg'}: not valid JSON ({err})") from err
            if not isinstance(cfg, dict) or not isinstance(cfg.get("labels"), list):
                raise ValueError(f"[{self.name}] corrupt file {path / 'cfg'}: expected an object with a 'labels' list")
            self._check_format(cfg, str(path / "cfg"))
        return self._load(lambda: super(ParserPipe, self).from_disk(path, exclude=exclude), str(path),
                          f"the weights in {path / 'model'}")

    def _load(self, load: Callable[[], object], where: str, what: str) -> "ParserPipe":
        """``load()`` (TrainablePipe's loading), its failure a ``ValueError`` naming ``what``; the
        settings (``SETTINGS``) stay the component's, then ``_after_load(where)``."""
        settings = self._settings()
        try:
            load()
        except Exception as err:
            raise ValueError(f"[{self.name}] could not load {what}: {err}") from err
        self.cfg.update(settings)
        self._after_load(where)
        return self

    def _settings(self) -> Dict:
        return {k: copy.deepcopy(self.cfg[k]) for k in self.SETTINGS if k in self.cfg}

    def _check_format(self, cfg: Dict, where: str) -> None:
        fmt = cfg.get("model_format", 1)
        if fmt != MODEL_FORMAT:
            saved_by = cfg.get("hcparse_version", "an unknown version")
            raise ValueError(
                f"[{self.name}] {where} was saved by spacy-hcparse {saved_by} with model format {fmt}; "
                f"this is spacy-hcparse {__version__}, which reads format {MODEL_FORMAT}: retrain the model "
                f"or install the version that saved it"
            )

    def _after_load(self, where: str) -> None:
        """Refuse weights that do not fit the label set (subclasses override)."""

    # ----- training data that cannot be learned ------------------------------------------------
    def _report_unusable_gold(self, doc: Doc, start: int, end: int, heads: Sequence[Optional[int]],
                              whole_sentence: Optional[bool] = None,
                              problem: Optional[Tuple[str, int]] = None) -> None:
        """Log (once per sentence text) why the gold of ``doc[start:end]`` was skipped in training.

        Gold that is not one tree (a cycle, no root or several roots inside a sentence, or heads
        crossing the sentence's boundary, which is what several roots become in a spaCy Doc) is a
        warning; chunks of sentences longer than ``max_length`` whose gold reaches outside them,
        and unaligned tokens, are logged at INFO. ``whole_sentence``: whether the span is a whole
        sentence (default: read from the doc's sentence starts). ``problem``: the reason and its
        level, where the caller knows them (default: ``gold_problem``'s).
        """
        whole = whole_sentence
        if whole is None:
            whole = bool(doc[start].is_sent_start) and (end == len(doc) or bool(doc[end].is_sent_start))
        reason, level = problem or gold_problem(heads, start, end, whole_sentence=whole)
        text = doc[start:end].text
        seen = self.__dict__.setdefault("_reported_gold", set())
        key = (reason, text)
        if key in seen:
            return
        seen.add(key)
        shown = text if len(text) <= 100 else text[:97] + "..."
        logger.log(
            level, "[%s] training sentence skipped, %s (tokens %d-%d of a %d-token doc): %r",
            self.name, reason, start, end, len(doc), shown,
        )

    @property
    def reported_gold(self) -> int:
        """How many distinct training sentences were skipped and reported so far."""
        return len(self.__dict__.get("_reported_gold", ()))
