"""What both parser components share: a label list in ``cfg``, span length, guarded loading."""
from typing import List, Tuple

from spacy.pipeline import TrainablePipe


class ParserPipe(TrainablePipe):
    """A TrainablePipe whose labels live in ``cfg["labels"]`` and whose model has ``max_length``.

    Loading wraps any failure in a ``ValueError`` naming the component and the file, then calls
    ``_after_load(where)``, where subclasses check that the weights fit the label set.
    """

    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.cfg["labels"])

    def add_label(self, label: str) -> int:
        if label in self.cfg["labels"]:
            return 0
        if self.model.has_dim("nO") and self.model.get_dim("nO") is not None:
            raise ValueError(f"[{self.name}] cannot add label {label!r} after the model was initialized")
        self.cfg["labels"].append(label)
        self.vocab.strings.add(label)
        return 1

    @property
    def max_length(self) -> int:
        """Longest span parsed as one tree (see ``segment.sentence_spans``)."""
        return int(self.model.attrs["max_length"])

    def from_bytes(self, bytes_data, *, exclude=tuple()):
        try:
            super().from_bytes(bytes_data, exclude=exclude)
        except Exception as err:
            raise ValueError(f"[{self.name}] could not load the model from bytes: {err}") from err
        self._after_load("bytes")
        return self

    def from_disk(self, path, *, exclude=tuple()):
        try:
            super().from_disk(path, exclude=exclude)
        except Exception as err:
            raise ValueError(f"[{self.name}] could not load the model from {path}: {err}") from err
        self._after_load(str(path))
        return self

    def _after_load(self, where: str) -> None:
        """Refuse weights that do not fit the label set (subclasses override)."""
