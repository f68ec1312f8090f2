"""What both parser components share: a label list in ``cfg``, span length, guarded loading,
a format stamp on saved models, and reports of training sentences that cannot be learned."""
import copy
import logging
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import srsly
from spacy.attrs import DEP, HEAD, ORTH, POS, SENT_START, TAG
from spacy.pipeline._parser_internals import nonproj
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example

from .. import __version__
from ..decoders import tree_problem
from ..segment import Span, chunked

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
        settings = self._settings()
        try:
            super().from_bytes(bytes_data, exclude=exclude)
        except Exception as err:
            raise ValueError(f"[{self.name}] could not load the model from bytes: {err}") from err
        self.cfg.update(settings)
        self._after_load("bytes")
        return self

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
        settings = self._settings()
        try:
            super().from_disk(path, exclude=exclude)
        except Exception as err:
            raise ValueError(f"[{self.name}] could not load the weights in {path / 'model'}: {err}") from err
        self.cfg.update(settings)
        self._after_load(str(path))
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


def gold_problem(
    heads: Sequence[Optional[int]], start: int, end: int, whole_sentence: bool = True
) -> Tuple[str, int]:
    """Why the gold heads (absolute, spaCy style: a root heads itself) of tokens ``start..end-1``
    are not one tree, and the logging level that deserves (``whole_sentence``: the span is a
    sentence of the doc, not a chunk of a longer one)."""
    n = end - start
    local = [-1]
    for m in range(n):
        h = heads[start + m]
        if h is None:
            return f"token {start + m} has no aligned gold head", logging.INFO
        if not (start <= h < end):
            if whole_sentence:
                return (f"the gold head of token {start + m} is outside its sentence (several roots "
                        f"or a cycle in the treebank)", logging.WARNING)
            return f"the gold head of token {start + m} is outside this chunk of a long sentence", logging.INFO
        local.append(0 if h == start + m else h - start + 1)
    problem = tree_problem(np.array(local, dtype=np.int64))
    if problem:
        return f"gold heads are not one tree: {problem}", logging.WARNING
    return "gold labels unknown to the component", logging.INFO


def reference_spans(eg: Example, max_length: int, heads: Optional[np.ndarray] = None) -> Tuple[List[Span], np.ndarray]:
    """The reference's sentences as spans of the predicted doc (chunked to ``max_length``), and
    the gold sentence starts of the predicted tokens (1 starts a sentence, 0 does not, -1
    unknown: no aligned token or no sentence annotation). Training learns from the reference's
    sentences whatever sentences the predicted doc carries (an annotating senter's, say).

    ``heads``: the aligned gold heads (absolute, a root heads itself, -1 unknown). Where some are
    known and some not (partial annotation), the sentences come from the known arcs instead
    (``partial_sentences``): spaCy derives a parsed doc's sentences from its heads, and with
    heads missing it cuts inside sentences and across known arcs."""
    pred, ref = eg.predicted, eg.reference
    if len(pred) == 0:
        return [], np.zeros(0, dtype=np.int64)
    if not (ref.has_annotation("SENT_START") or ref.has_annotation("DEP")):
        return chunked(pred, [(0, len(pred))], max_length), np.full(len(pred), -1, dtype=np.int64)
    if _same_words(pred, ref):
        gold = (ref.to_array(SENT_START).astype(np.int64) == 1).astype(np.int64)
    else:
        gold = np.array([-1 if s is None else int(bool(s)) for s in eg.get_aligned_sent_starts()], dtype=np.int64)
    begins = np.flatnonzero(gold == 1).tolist()
    if heads is not None and (heads < 0).any() and (heads >= 0).any():
        begins, gold = partial_sentences(heads, gold)
    cuts = sorted({0, *begins}) + [len(pred)]
    return chunked(pred, list(zip(cuts[:-1], cuts[1:])), max_length), gold


def partial_sentences(heads: np.ndarray, starts: np.ndarray) -> Tuple[List[int], np.ndarray]:
    """Sentence cuts and gold starts of a doc from its known arcs (``heads``: absolute, a root
    heads itself, -1 unknown; ``starts``: the reference's sentence starts, 1 where one begins).

    Sentences are contiguous and hold whole trees, so tokens linked by known arcs share a
    sentence: each group of overlapping link groups (a block) lies in one sentence, and two
    blocks holding a known root each are two sentences. Between two such blocks the cut goes
    where the reference puts one, if it may, else at the later block. A boundary is gold (1) only
    where nothing but the cut lies between the two rooted blocks; the other places it could be
    are unknown (-1), and so are the starts of blocks before the first and after the last rooted
    block (their sentences' roots are not known), which are not cut. Everything else is 0.
    """
    n = len(heads)
    group = np.arange(n)  # union-find over the known arcs

    def find(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for m, h in enumerate(heads.tolist()):
        if h >= 0 and h != m:
            group[find(m)] = find(h)
    roots = [find(i) for i in range(n)]
    lo = {r: i for i, r in reversed(list(enumerate(roots)))}
    hi = {r: i for i, r in enumerate(roots)}
    blocks: List[List[int]] = []  # [lo, hi, known roots], in order
    for r in sorted(lo, key=lo.get):
        if blocks and lo[r] <= blocks[-1][1]:
            blocks[-1][1] = max(blocks[-1][1], hi[r])
        else:
            blocks.append([lo[r], hi[r], 0])
    for m in np.flatnonzero(heads == np.arange(n)).tolist():
        next(b for b in blocks if b[0] <= m <= b[1])[2] += 1
    gold = np.zeros(n, dtype=np.int64)
    gold[0] = 1
    cuts: List[int] = []
    rooted = [i for i, b in enumerate(blocks) if b[2]]
    for i, b in enumerate(blocks):
        if i and (not rooted or i <= rooted[0] or i > rooted[-1]):
            gold[b[0]] = -1
    for left, right in zip(rooted[:-1], rooted[1:]):
        places = [blocks[i][0] for i in range(left + 1, right + 1)]
        cuts.append(next((p for p in places if starts[p] == 1), places[-1]))
        gold[places] = 1 if len(places) == 1 else -1
    return cuts, gold


def aligned_tags(eg: Example, attr: str) -> List[Optional[str]]:
    """The reference's ``attr`` (``"POS"``, ``"TAG"``, ``"DEP"``, or a tag derived from the tree:
    ``"RELPOS"``, see ``relative_pos_tags``) per predicted token, None where unknown."""
    pred, ref = eg.predicted, eg.reference
    if attr == "RELPOS":
        return _aligned_values(eg, relative_pos_tags(ref))
    if _same_words(pred, ref):
        strings = ref.vocab.strings
        return [strings[v] if v else None for v in ref.to_array(attr).tolist()]
    return list(eg.get_aligned(attr, as_string=True))


def relative_pos_tags(doc: Doc, cap: int = 3) -> List[Optional[str]]:
    """Each token's head as a tag: the side of the head, how many words with the head's UPOS lie
    from the token to the head (the head included; at most ``cap``) and that UPOS, e.g. ``+1NOUN``
    (the next noun to the right), ``-2VERB``; ``ROOT`` for a root; None where the token has no
    label (no parse, or a partial one: its head is unknown) or the head's UPOS is unknown. The
    relative part-of-speech head encoding of sequence-labeling parsers (Strzyz et al. 2019), used
    here as a training signal for the encoder."""
    rows = doc.to_array([HEAD, POS, DEP])
    heads = np.arange(len(doc)) + rows[:, 0].astype(np.int64)
    pos, labelled = rows[:, 1], rows[:, 2] != 0
    strings = doc.vocab.strings
    out: List[Optional[str]] = []
    for i, h in enumerate(heads.tolist()):
        if not labelled[i]:
            out.append(None)
        elif h == i:
            out.append("ROOT")
        elif not pos[h]:
            out.append(None)
        else:
            between = pos[h + 1: i] if h < i else pos[i + 1: h]
            count = 1 + int((between == pos[h]).sum())
            out.append(f"{'+' if h > i else '-'}{min(count, cap)}{strings[pos[h]]}")
    return out


def _aligned_values(eg: Example, values: List[Optional[str]]) -> List[Optional[str]]:
    """Per predicted token the value of the one reference token it is aligned to one-to-one,
    None elsewhere (``values``: one per reference token)."""
    if _same_words(eg.predicted, eg.reference):
        return list(values)
    x2y, y2x = eg.alignment.x2y, eg.alignment.y2x
    out: List[Optional[str]] = []
    for i in range(len(eg.predicted)):
        targets = np.asarray(x2y[i]).tolist()
        one = len(targets) == 1 and len(np.asarray(y2x[targets[0]])) == 1
        out.append(values[targets[0]] if one else None)
    return out


def _same_words(pred: Doc, ref: Doc) -> bool:
    return len(pred) == len(ref) and bool((pred.to_array(ORTH) == ref.to_array(ORTH)).all())


def aligned_gold(eg: Example, projectivize: bool, tags: bool = False) -> Tuple[list, list, Optional[list]]:
    """``eg.get_aligned_parse(projectivize)`` (heads as predicted-doc indices or None, labels)
    and, with ``tags``, ``eg.get_aligned("TAG", as_string=True)``.

    When both docs have the same words and the reference a full parse (training on gold tokens,
    the usual case), they are read from ``to_array`` in one pass instead of spaCy's per-token
    loops over the reference, which took a fifth of a neural training step. Otherwise spaCy's
    own alignment does the work.
    """
    pred, ref = eg.predicted, eg.reference
    if _same_words(pred, ref) and len(ref) and ref.has_annotation("DEP"):
        rows = ref.to_array([HEAD, DEP, TAG])  # uint64: string hashes, and HEAD relative
        if (rows[:, 1] != 0).all():  # every token has its head and label: nothing is missing
            strings = ref.vocab.strings
            heads = (np.arange(len(ref)) + rows[:, 0].astype(np.int64)).tolist()  # -1 wraps back
            deps = [strings[d] for d in rows[:, 1].tolist()]
            if projectivize:
                heads, deps = nonproj.projectivize(heads, deps)
            tag_strings = [strings[t] if t else None for t in rows[:, 2].tolist()] if tags else None
            return list(heads), list(deps), tag_strings
    heads, deps = eg.get_aligned_parse(projectivize=projectivize)
    return list(heads), list(deps), (eg.get_aligned("TAG", as_string=True) if tags else None)


def partial_span_tree(heads: np.ndarray, start: int, end: int, chunk: bool) -> Optional[np.ndarray]:
    """The span-local gold (n+1,) of tokens ``start..end-1`` from absolute heads (a token heading
    itself is a root; ``-1`` unknown): ``[-1, h_1 .. h_n]`` with the root's child at 0 and ``-1``
    where the head is unknown, or outside a ``chunk`` of a longer sentence; None when the known
    arcs cannot be part of one tree (a cycle, several roots, an arc leaving a whole sentence:
    defects of the gold itself)."""
    span_heads = heads[start:end]
    if not chunk and ((span_heads >= end) | ((span_heads >= 0) & (span_heads < start))).any():
        return None
    inside = (span_heads >= start) & (span_heads < end)
    local = np.full(end - start + 1, -1, dtype=np.int64)
    local[1:][inside] = span_heads[inside] - start + 1
    local[1:][span_heads == np.arange(start, end)] = 0
    if inside.all():
        return None if tree_problem(local) else local
    return None if partial_problem(local) else local


def partial_problem(local: np.ndarray) -> str:
    """Why the known arcs of span-local heads (``-1``: unknown) cannot be part of one tree (a
    cycle, more than one word on the root), or ``""``."""
    n_roots = int((local[1:] == 0).sum())
    if n_roots > 1:
        return f"expected at most one word attached to the root among the known heads, got {n_roots}"
    state = np.zeros(len(local), dtype=np.int8)  # 0 unseen, 1 on the current path, 2 done
    state[0] = 2
    for word in range(1, len(local)):
        path = []
        node = word
        while node > 0 and state[node] == 0:
            state[node] = 1
            path.append(node)
            node = local[node]
        if node > 0 and state[node] == 1:
            return f"cycle through word {node} among the known heads"
        state[path] = 2
    return ""


def span_tree(heads: np.ndarray, start: int, end: int) -> Optional[np.ndarray]:
    """The span-local tree (n+1,) of tokens ``start..end-1`` from their absolute heads (a token
    heading itself is a root; ``-1`` unknown): ``[-1, h_1 .. h_n]`` with the root's child at 0,
    or None if a head falls outside the span or the result is not one tree."""
    span_heads = heads[start:end]
    if (span_heads < start).any() or (span_heads >= end).any():
        return None
    local = np.empty(end - start + 1, dtype=np.int64)
    local[0] = -1
    local[1:] = span_heads - start + 1
    local[1:][span_heads == np.arange(start, end)] = 0
    return None if tree_problem(local) else local
