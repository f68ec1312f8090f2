"""``UDTokenizer``: a trained tokenizer for spaCy that segments raw text as a UD treebank does.

Registered as ``[nlp.tokenizer] @tokenizers = "spacy_hcparse.UDTokenizer.v1"``. The text is
cut into pieces (``features.piece_spans``: letter runs, digit runs, single other characters,
runs cut by the learned ``SplitTable``) and the model (``model.build_char_model``) labels the last
character of every piece (``features.LABELS``); a token ends at every token-end label and wherever
whitespace follows. The rule tokenizer is read twice: as a feature of the model, and in decoding,
where ``hint_weight`` is added to the log-probability of the labels that agree with it (0: the
model alone; large: the rule tokenizer's token ends, the model's sentence ends and multiword
tokens among them). Training chooses the weight on the development treebank. A token the model
marks as multiword is expanded by the ``MultiwordLexicon`` (kept whole where it has no entry or
rule).

The Doc holds both levels: its tokens are the syntactic words (``do`` -> ``de``, ``o``; only the
last word of a multiword token keeps its trailing space) and ``doc._.hc_multiword_tokens`` lists
the surface tokens that are several words as ``(start, end, form)``: Doc token indices, end
exclusive, and the surface text. Whitespace follows spaCy's tokenizer: a single space after a
token is its ``whitespace_``, any other run of whitespace is a token of its own.

Sentences: with ``set_sent_starts`` (default), the first word after each predicted sentence end,
after each blank line and at the start of the text has ``is_sent_start = True``, the inner words
of a multiword token ``False``, every other token None (unknown). The Doc then has sentence
boundaries, so ``hc_parser`` parses those sentences as given; without it the Doc has none and a
parser that segments (``hc_parser``'s sentence-start scorer, spaCy's parser) decides, reading the
tokenizer's guess where ``sent_start_weight`` is positive: per word, the weight times the model's
log-odds that the token before ends a sentence (``sentence_end_odds``; 0 at a text's first word,
on whitespace and inside a multiword token) in ``doc._.hc_sent_start_hints``, which
``segment.segment_docs`` adds to the parser's sentence-start logits.

A tokenizer made from the config is untrained: it gets its weights from ``from_disk`` (a saved
pipeline loads it so), from ``initialize(path=...)`` (``[initialize.tokenizer] path = ...``, the
file ``python -m spacy_hcparse train-tokenizer`` writes), or from ``tokenizer.train``.
"""
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import srsly
from spacy.attrs import SENT_START
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import registry
from spacy.vocab import Vocab
from thinc.api import Model
from thinc.types import Ragged

from ..blas import blas_threads, use_blas
from ..names import MULTIWORD_TOKENS as MWT_ATTR
from ..names import SENT_START_HINTS as HINTS_ATTR
from .features import (IS_MWT, IS_SENT_END, IS_TOKEN_END, RULE_COLUMN, SEPARATOR, Joined, SplitTable, code_points,
                       join_texts, space_codes, piece_features, piece_spans, text_hashes)
from .inference import Folds, kept_folds, predict_probs
from .lexicon import MultiwordLexicon
from .rules import RuleEnds
from .model import build_char_model
from .orths import span_orths

FORMAT = "spacy_hcparse.UDTokenizer"
FORMAT_VERSION = 1
TOKENIZER_NAME = "spacy_hcparse.UDTokenizer.v1"
PIECE_ROWS = 2048  # pieces the model reads at once (plus context on each side)



@dataclass(frozen=True)
class TokenizerDefaults:
    """The model's default settings (one definition: the factory, the class and the CLI read it)."""

    width: int = 64
    dilations: Tuple[int, ...] = (1, 2, 4, 8)
    embed_rows: int = 5000
    hint_weight: float = 0.0
    sent_start_weight: float = 0.25  # chosen on EWT dev raw text (docs/tokenizer.md)


DEFAULTS = TokenizerDefaults()

if not Doc.has_extension(MWT_ATTR):
    Doc.set_extension(MWT_ATTR, default=None)
if not Doc.has_extension(HINTS_ATTR):
    Doc.set_extension(HINTS_ATTR, default=None)
LOG_ODDS_LIMIT = 30.0  # a sentence-start hint's log-odds are clipped to +-this


@registry.tokenizers(TOKENIZER_NAME)
def create_ud_tokenizer(width: int = DEFAULTS.width, dilations: List[int] = list(DEFAULTS.dilations),
                        embed_rows: int = DEFAULTS.embed_rows, set_sent_starts: bool = True,
                        rule_lang: Optional[str] = None, hint_weight: float = DEFAULTS.hint_weight,
                        sent_start_weight: float = DEFAULTS.sent_start_weight) -> Callable[[Language], "UDTokenizer"]:
    """The ``[nlp.tokenizer]`` factory.

    width (int): width of the character vectors.
    dilations (List[int]): one convolution block per entry, with that dilation.
    embed_rows (int): rows of the hashed piece embedding.
    set_sent_starts (bool): set ``is_sent_start`` from the predicted sentence ends.
    rule_lang (Optional[str]): the language whose spaCy rule tokenizer the model reads as a hint
        (None: the pipeline's language; "": none). A trained tokenizer keeps its own.
    hint_weight (float): added in decoding to the log-probability of the labels that agree with
        the rule tokenizer (see module docstring). A trained tokenizer keeps its own.
    sent_start_weight (float): without ``set_sent_starts``, the weight of the tokenizer's
        sentence-start log-odds that a segmenting parser adds to its own logits
        (``doc._.hc_sent_start_hints``; 0: none, the parser alone).
    """
    def make(nlp: Language) -> UDTokenizer:
        return UDTokenizer(nlp.vocab, width=width, dilations=dilations, embed_rows=embed_rows,
                           set_sent_starts=set_sent_starts, rule_lang=rule_lang, hint_weight=hint_weight,
                           sent_start_weight=sent_start_weight)

    return make


class UDTokenizer:
    """Raw text -> Doc of syntactic words (see module docstring)."""

    def __init__(self, vocab: Vocab, *, width: int = DEFAULTS.width, dilations: Sequence[int] = DEFAULTS.dilations,
                 embed_rows: int = DEFAULTS.embed_rows, set_sent_starts: bool = True,
                 rule_lang: Optional[str] = None, hint_weight: float = DEFAULTS.hint_weight,
                 sent_start_weight: float = DEFAULTS.sent_start_weight):
        for name, value in (("hint_weight", hint_weight), ("sent_start_weight", sent_start_weight)):
            if not _is_weight(value):
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")
        self.vocab = vocab
        self.cfg: Dict[str, Any] = {"width": int(width), "dilations": [int(d) for d in dilations],
                                    "embed_rows": int(embed_rows), "set_sent_starts": bool(set_sent_starts),
                                    "rule_lang": rule_lang if rule_lang is not None else vocab.lang,
                                    "hint_weight": float(hint_weight), "sent_start_weight": float(sent_start_weight)}
        self._rules: Optional[RuleEnds] = None  # spaCy's rules of cfg["rule_lang"], made when first needed
        self._folds: Folds = {}  # the model's folded embedding (``inference.kept_folds``)
        self.model = self._build_model()
        self.lexicon = MultiwordLexicon()
        self.splits = SplitTable()
        self.trained = False

    def rule_ends(self, text: str) -> Optional[np.ndarray]:
        """Where the rule tokenizer of ``cfg["rule_lang"]`` (spaCy's, as ``spacy.blank`` makes it)
        ends its tokens in ``text`` (character offsets, exclusive); None without a rule language."""
        return self.batch_rule_ends([text], np.zeros(1, dtype=np.int64))

    def batch_rule_ends(self, texts: Sequence[str], offsets: np.ndarray) -> Optional[np.ndarray]:
        """``rule_ends`` of every text, text ``i``'s shifted by ``offsets[i]``, in one array (each
        text tokenized on its own); None without a rule language."""
        rules = self._rule_reader()
        return None if rules is None else rules(texts, offsets)

    def _rule_reader(self) -> Optional[RuleEnds]:
        """spaCy's rules of ``cfg["rule_lang"]`` (made when first needed); None without one."""
        lang = self.cfg["rule_lang"]
        if not lang:
            return None
        if self._rules is None or self._rules.lang != lang:
            self._rules = RuleEnds(lang)
        return self._rules

    def _build_model(self) -> Model:
        model = build_char_model(self.cfg["width"], self.cfg["dilations"], self.cfg["embed_rows"])
        model.initialize()
        use_blas(model, "numpy")
        return model

    @property
    def context(self) -> int:
        """Pieces the model sees on each side of a piece."""
        return sum(self.cfg["dilations"])

    # ----- tokenizing ----------------------------------------------------------------------------
    def __call__(self, text: str) -> Doc:
        return next(iter(self.pipe([text])))

    def pipe(self, texts: Iterable[str], batch_size: int = 64) -> Iterator[Doc]:
        """Docs of ``texts``, ``batch_size`` texts per model call (the model's folded weights,
        ``inference.predict_probs``, kept while the weights stay: ``inference.kept_folds``,
        checked once per call of ``pipe``; they do not change meanwhile)."""
        folds = self._folds = kept_folds(self.model, self._folds)
        batch: List[str] = []
        for text in texts:
            batch.append(text)
            if len(batch) >= batch_size:
                yield from self._docs(batch, folds)
                batch = []
        if batch:
            yield from self._docs(batch, folds)

    def _docs(self, texts: List[str], folds: Optional[Dict] = None) -> List[Doc]:
        if not texts:
            return []
        batch, labels, odds = self._predict_joined(texts, with_odds=self.gives_hints, folds=folds)
        return self._make_docs(batch, labels, odds)

    @property
    def gives_hints(self) -> bool:
        """Whether Docs carry the tokenizer's sentence-start hints (``doc._.hc_sent_start_hints``,
        see ``names.SENT_START_HINTS``): without ``set_sent_starts``, with a positive
        ``sent_start_weight``."""
        return not self.cfg["set_sent_starts"] and self.cfg["sent_start_weight"] > 0

    def predict(self, texts: Sequence[str]) -> List[np.ndarray]:
        """Per text, a label per character (``features.LABELS``), with the token and sentence ends
        the text forces (before whitespace, at blank lines and at the end of the text)."""
        if not texts:
            self._check(texts)
            return []
        batch, labels, _ = self._predict_joined(texts)
        offsets = batch.offsets
        return [labels[offsets[i]:offsets[i + 1] - len(SEPARATOR)] for i in range(len(texts))]

    def _check(self, texts: Sequence[str]) -> None:
        if not self.trained:
            raise ValueError("the UDTokenizer is not trained: train it with `python -m spacy_hcparse "
                             "train-tokenizer` and load it (from_disk, or [initialize.tokenizer] path)")
        for text in texts:
            if not isinstance(text, str):
                raise ValueError(f"the tokenizer reads str, got {type(text).__name__}")

    def _predict_joined(self, texts: Sequence[str], with_odds: bool = False, folds: Optional[Dict] = None
                        ) -> Tuple[Joined, np.ndarray, Optional[np.ndarray]]:
        """``predict`` for the batch as one string: (the texts joined, ``features.join_texts``; a
        label per character of the joined string; with ``with_odds``, per character the model's
        log-odds that a sentence ends there given that a token does (``sentence_end_odds``; 0
        where no piece ends), else None; ``folds``: as ``inference.predict_probs`` reads it). The
        joined string's code points are read once for the pieces, their features, the rule hint,
        the decoding and the Docs."""
        self._check(texts)
        # one string for the batch: pieces never cross the whitespace between texts, and the
        # features and the decoding read each text's pieces as in that text alone
        batch = join_texts(texts)
        joined, offsets, codes, space = batch
        hashes = text_hashes(joined, codes)
        starts, ends = piece_spans(joined, self.splits, hashes, codes)
        text_of = np.searchsorted(offsets, starts, side="right") - 1
        bounds = (offsets[text_of], offsets[text_of + 1] - len(SEPARATOR))
        rules = self._rule_reader()
        rule_ends = None if rules is None else rules.joined(joined, offsets, space)
        features = piece_features(joined, starts, ends, rule_ends, bounds, hashes, codes)
        probs = self._batch_probs(features, np.bincount(text_of, minlength=len(texts)), folds)
        labels = _decode(joined, starts, ends, probs, features[:, RULE_COLUMN], self.cfg["hint_weight"], codes, space)
        odds = None
        if with_odds:
            odds = np.zeros(len(joined), dtype=np.float32)
            odds[ends - 1] = sentence_end_odds(probs)
        return batch, labels, odds

    def piece_probs(self, features: Sequence[np.ndarray], folds: Optional[Dict] = None) -> List[np.ndarray]:
        """Per text (its ``piece_features``), the model's (n_pieces, n_labels) label probabilities.
        Long texts are read in stretches of ``PIECE_ROWS`` pieces with ``context`` pieces on each
        side (``folds``: as ``inference.predict_probs`` reads it)."""
        margin = self.context
        rows, lengths, spans = [], [], []  # spans: (text, start, stop, offset of start in stretch)
        for t, feats in enumerate(features):
            for start in range(0, len(feats), PIECE_ROWS):
                stop = min(start + PIECE_ROWS, len(feats))
                lo, hi = max(0, start - margin), min(len(feats), stop + margin)
                rows.append(feats[lo:hi])
                lengths.append(hi - lo)
                spans.append((t, start, stop, start - lo))
        out = [np.zeros((len(feats), len(IS_TOKEN_END)), dtype=np.float32) for feats in features]
        if not rows:
            return out
        probs = self._model_probs(np.concatenate(rows), lengths, folds)
        at = 0
        for (t, start, stop, offset), n in zip(spans, lengths):
            out[t][start:stop] = probs[at + offset:at + offset + stop - start]
            at += n
        return out

    def _batch_probs(self, features: np.ndarray, lengths: np.ndarray, folds: Optional[Dict] = None) -> np.ndarray:
        """``piece_probs`` of a batch's texts, as one array: ``features`` holds their pieces one
        text after another, ``lengths[i]`` of text ``i``. Texts that fit in ``PIECE_ROWS`` go to
        the model as they are."""
        if not len(features):
            return np.zeros((0, len(IS_TOKEN_END)), dtype=np.float32)
        if lengths.max() <= PIECE_ROWS:
            return self._model_probs(features, lengths[lengths > 0], folds)
        return np.concatenate(self.piece_probs(np.split(features, np.cumsum(lengths)[:-1]), folds))

    def _model_probs(self, rows: np.ndarray, lengths: Sequence[int], folds: Optional[Dict]) -> np.ndarray:
        """The model's probabilities of ``rows`` (features), sequences of ``lengths`` rows."""
        ops = self.model.ops
        X = Ragged(ops.asarray(rows, dtype="uint64"), ops.asarray1i(lengths))
        use_blas(self.model, "numpy")  # also for nodes a caller swapped in
        with blas_threads(1):
            return predict_probs(self.model, X, folds)

    def make_doc(self, text: str, labels: np.ndarray) -> Doc:
        """The Doc of ``text`` cut where ``labels`` (one per character, as ``predict`` returns) say.

        Whitespace is written as spaCy's tokenizer writes it: one space after a token is its
        trailing space, the rest of a gap (or a gap at the start) a whitespace token."""
        return self._make_docs(join_texts([text]), labels)[0]

    def _make_docs(self, batch: Joined, labels: np.ndarray, odds: Optional[np.ndarray] = None) -> List[Doc]:
        """``make_doc`` of every text of a batch (``features.join_texts``; ``labels``: one per
        character of its text; ``odds``: as ``_predict_joined`` gives them, for the
        sentence-start hints).

        The batch is one stream of items in numpy (a token, or a whitespace token: one before a
        text's first token, one after a token followed by more than a single space, a text of
        whitespace alone), in the order of the text, so that the words and spaces of all Docs come
        from one pass (``_item_words``); the tokens marked multiword that the lexicon expands become
        their words, and each Doc is made from its slice of the stream."""
        joined, offsets, codes, space = batch
        n_texts = len(offsets) - 1
        text_starts, text_ends = offsets[:-1], offsets[1:] - len(SEPARATOR)
        ends = np.flatnonzero(IS_TOKEN_END[labels]) + 1  # exclusive; none in a separator
        lo = np.searchsorted(ends, text_starts, side="right")  # each text's first token
        hi = np.searchsorted(ends, text_ends, side="right")
        before = np.concatenate(([0], ends[:-1]))[:len(ends)]  # where the gap before each token begins
        has_tokens = hi > lo
        firsts = lo[has_tokens]
        before[firsts] = text_starts[has_tokens]
        chars = np.flatnonzero(~space)  # every token begins with one, at or after its gap
        starts = chars[np.searchsorted(chars, before)]
        text_of = np.repeat(np.arange(n_texts), hi - lo)
        gap_after = np.minimum(np.append(starts[1:], len(joined)), text_ends[text_of]) - ends
        space_after = (gap_after > 0) & (np.append(codes, 0)[ends] == 32)
        token_labels = labels[ends - 1]
        sent_start = np.concatenate(([True], IS_SENT_END[token_labels][:-1]))
        sent_start[firsts] = True
        flags = np.where(sent_start, 1, 0)  # SENT_START of each token (of its first word)
        hints = None
        if odds is not None:  # the log-odds of the token before ending a sentence, weighted
            hints = np.concatenate(([0.0], odds[ends[:-1] - 1])).astype(np.float32) * self.cfg["sent_start_weight"]
            hints[firsts] = 0.0
        # the whitespace tokens: after a token (the gap but its single trailing space), before a
        # text's first token, a text without tokens; each goes in before the next token
        after = np.flatnonzero(gap_after > space_after)
        leading = has_tokens & (starts[np.minimum(lo, len(starts) - 1)] > text_starts) if len(starts) else has_tokens
        bare = ~has_tokens & (text_ends > text_starts)
        ws_start = np.concatenate((ends[after] + space_after[after], text_starts[leading], text_starts[bare]))
        ws_end = np.concatenate((ends[after] + gap_after[after], starts[lo[leading]], text_ends[bare]))
        ws_text = np.concatenate((text_of[after], np.flatnonzero(leading), np.flatnonzero(bare)))
        order = np.argsort(ws_start)  # in the order of the text (several may go before one token)
        ws_start, ws_end, ws_text = ws_start[order], ws_end[order], ws_text[order]
        at = np.searchsorted(starts, ws_start)
        item_start = np.insert(starts, at, ws_start)
        item_end = np.insert(ends, at, ws_end)
        item_space = np.insert(space_after, at, False)
        item_text = np.insert(text_of, at, ws_text)
        item_source = np.insert(np.arange(len(starts)), at, -1)  # per item: its token, -1 whitespace
        words = self._item_words(joined, codes, item_start, item_end)
        n_words = np.ones(len(words), dtype=np.int64)
        ranges: List[List[Tuple[int, int, str]]] = [[] for _ in range(n_texts)]
        expanded: List[Tuple[int, List[str]]] = []  # (item, its words) of the multiword tokens
        if IS_MWT[token_labels].any():
            marked = np.flatnonzero(item_source >= 0)
            marked = marked[IS_MWT[token_labels][item_source[marked]]]
            for k in marked.tolist():
                parts = self.lexicon.expand(joined[item_start[k]:item_end[k]])
                if parts is not None:
                    expanded.append((k, list(parts)))
                    n_words[k] = len(parts)
        word_start = np.cumsum(n_words) - n_words  # each item's first word in the batch
        text_words = np.bincount(item_text, weights=n_words, minlength=n_texts).astype(np.int64)
        text_first = np.cumsum(text_words) - text_words
        source = np.repeat(item_source, n_words)  # per word: its token, -1 whitespace, -2 inside one
        spaces = np.repeat(item_space, n_words)
        if expanded:
            stream: List[str] = []
            done = 0
            for k, parts in expanded:
                first = int(word_start[k])
                stream.extend(words[done:k])
                stream.extend(parts)
                source[first + 1:first + len(parts)] = -2
                spaces[first:first + len(parts) - 1] = False
                t = int(item_text[k])
                ranges[t].append((first - int(text_first[t]), first - int(text_first[t]) + len(parts),
                                  joined[item_start[k]:item_end[k]]))
                done = k + 1
            stream.extend(words[done:])
            words = stream
        spaces_l = spaces.tolist()
        starts_of, hints_of = self._word_values(source, flags, hints)
        docs = []
        for i, (begin, end) in enumerate(zip(text_first.tolist(), (text_first + text_words).tolist())):
            doc = Doc(self.vocab, words=words[begin:end], spaces=spaces_l[begin:end])
            doc._.set(MWT_ATTR, ranges[i])
            if starts_of is not None and end > begin:
                doc.from_array([SENT_START], starts_of[begin:end])
            if hints_of is not None:
                doc._.set(HINTS_ATTR, hints_of[begin:end].tolist())
            docs.append(doc)
        return docs

    def _item_words(self, joined: str, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray
                    ) -> List[Union[int, str]]:
        """What ``Doc(vocab, words=...)`` reads for the spans ``joined[starts[i]:ends[i]]``: the
        string's id where the vocabulary holds it (``orths.span_orths``), else the string."""
        orths = span_orths(joined, codes, starts, ends)
        if orths is None:
            return [joined[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
        words: List[Union[int, str]] = orths.tolist()
        known = np.fromiter(map(self.vocab.strings.__contains__, words), dtype=bool, count=len(words))
        for i in np.flatnonzero(~known).tolist():
            words[i] = joined[int(starts[i]):int(ends[i])]
        return words

    def _word_values(self, source: np.ndarray, flags: np.ndarray, hints: Optional[np.ndarray]
                     ) -> Tuple[Optional[np.ndarray], Optional[np.ndarray]]:
        """Per word of a batch (``source``: its token, -1 a whitespace token, -2 a word after the
        first of a multiword token): its ``SENT_START`` (uint64: ``flags[token]`` for a token's
        first word, 1 a start, 0 unknown; -1 inside a multiword token, 0 whitespace), with
        ``set_sent_starts`` (else None); its sentence-start hint (float32: ``hints[token]`` for a
        token's first word, 0 for the others), where ``hints`` are given (else None)."""
        token = np.maximum(source, 0)
        of_token = source >= 0
        starts = None
        if self.cfg["set_sent_starts"]:
            values = np.where(source == -2, -1, 0)
            values[of_token] = flags[token[of_token]]
            starts = values.astype(np.int32).astype(np.uint64)
        values = None
        if hints is not None:
            values = np.zeros(len(source), dtype=np.float32)
            values[of_token] = hints[token[of_token]]
        return starts, values

    # ----- training and loading ------------------------------------------------------------------
    def initialize(self, get_examples: Optional[Callable] = None, *, nlp: Optional[Language] = None,
                   path: Optional[Union[str, Path]] = None) -> None:
        """``[initialize.tokenizer]``: load the trained tokenizer at ``path`` (a file that
        ``to_disk`` or ``train-tokenizer`` wrote); without a path, keep what is loaded."""
        if path is not None:
            self.from_disk(path)

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        return srsly.msgpack_dumps({"format": FORMAT, "version": FORMAT_VERSION, "cfg": self.cfg,
                                    "trained": self.trained, "lexicon": self.lexicon.to_dict(),
                                    "splits": {k: list(v) for k, v in self.splits.cuts.items()},
                                    "model": self.model.to_bytes()})

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = tuple()) -> "UDTokenizer":
        """Load what ``to_bytes`` wrote; ValueError (the model is left as it was) for other data."""
        try:
            msg = srsly.msgpack_loads(data)
        except Exception as err:  # noqa: BLE001 (msgpack raises several kinds)
            raise ValueError(f"not UDTokenizer data (unreadable: {err})") from None
        if not isinstance(msg, dict) or msg.get("format") != FORMAT:
            raise ValueError("not UDTokenizer data (no UDTokenizer header)")
        if msg.get("version") != FORMAT_VERSION:
            raise ValueError(f"UDTokenizer data of version {msg.get('version')!r}; this version reads {FORMAT_VERSION}")
        cfg = msg.get("cfg")
        if isinstance(cfg, dict) and "hint_weight" not in cfg:  # written before the weight existed
            cfg = {**cfg, "hint_weight": 0.0}
        if isinstance(cfg, dict):  # written before sent_start_weight existed: a runtime choice anyway
            cfg = {**cfg, "sent_start_weight": self.cfg["sent_start_weight"]}
        if not isinstance(cfg, dict) or set(cfg) != set(self.cfg) or not _is_weight(cfg["hint_weight"]):
            raise ValueError(f"UDTokenizer data with settings {cfg!r}; expected {sorted(self.cfg)}")
        lexicon = MultiwordLexicon.from_dict(msg.get("lexicon"))
        splits = msg.get("splits")
        if not isinstance(splits, dict):
            raise ValueError("UDTokenizer data without its table of cut runs")
        try:
            splits = SplitTable({str(k): tuple(v) for k, v in splits.items()})
        except (TypeError, ValueError) as err:
            raise ValueError(f"UDTokenizer data with a bad table of cut runs: {err}") from None
        old_cfg = self.cfg
        # runtime choices: the config's
        self.cfg = {**cfg, "set_sent_starts": old_cfg["set_sent_starts"],
                    "sent_start_weight": old_cfg["sent_start_weight"]}
        try:
            model = self._build_model().from_bytes(msg["model"])
        except Exception as err:  # noqa: BLE001 (thinc raises several kinds for bad weights)
            self.cfg = old_cfg
            raise ValueError(f"UDTokenizer data with unreadable model weights: {err}") from None
        self.model, self.lexicon, self.splits, self.trained = model, lexicon, splits, bool(msg.get("trained"))
        return self

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        Path(path).write_bytes(self.to_bytes())

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "UDTokenizer":
        path = Path(path)
        try:
            return self.from_bytes(path.read_bytes())
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None


# Factories whose components find sentences themselves, better than the tokenizer's guess: with
# one in the pipeline, `ud_tokenizer_for` leaves sentence starts to it.
SEGMENTING_FACTORIES = ("hc_parser", "hc_transition_parser")


def segments_itself(nlp: Language) -> bool:
    """Whether one of ``nlp``'s components finds sentences itself (``SEGMENTING_FACTORIES``)."""
    return any(nlp.get_pipe_meta(name).factory in SEGMENTING_FACTORIES for name in nlp.pipe_names)


def ud_tokenizer_for(nlp: Language, path: Union[str, Path]) -> UDTokenizer:
    """The trained UD tokenizer at ``path`` for the pipeline ``nlp``: it sets sentence starts
    unless a component of ``nlp`` segments itself (``segments_itself``), whose sentences then
    decide (on EWT dev they scored as well as the tokenizer's with paragraph breaks and better
    without; spaCy's parser trained on one-sentence docs finds few sentences and keeps the
    tokenizer's)."""
    return UDTokenizer(nlp.vocab, set_sent_starts=not segments_itself(nlp)).from_disk(path)


def use_ud_tokenizer(nlp: Language, tokenizer: UDTokenizer) -> Language:
    """Make ``tokenizer`` the pipeline's, in its config too (so that ``nlp.to_disk`` saves a
    pipeline that ``spacy.load`` builds with it)."""
    nlp.tokenizer = tokenizer
    nlp._config["nlp"]["tokenizer"] = {"@tokenizers": TOKENIZER_NAME, **tokenizer.cfg}
    return nlp


def _is_weight(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def sentence_end_odds(probs: np.ndarray) -> np.ndarray:
    """Per piece, the log-odds that a sentence ends there given that a token does, from the
    model's label probabilities (n_pieces, n_labels): ``log P(SENT_END or MWT_SENT_END) - log
    P(TOKEN_END or MWT_END)``, within +-``LOG_ODDS_LIMIT`` (float32)."""
    ends = np.maximum(probs[:, IS_SENT_END].sum(axis=1), 1e-30)
    others = np.maximum(probs[:, IS_TOKEN_END & ~IS_SENT_END].sum(axis=1), 1e-30)
    return np.clip(np.log(ends) - np.log(others), -LOG_ODDS_LIMIT, LOG_ODDS_LIMIT).astype(np.float32)


def hinted_scores(probs: np.ndarray, hints: np.ndarray, hint_weight: float) -> np.ndarray:
    """Per piece and label, the log-probability plus ``hint_weight`` where the label agrees with
    the rule tokenizer's hint (``features.piece_features`` column 5: 2 a token ends, 1 none ends,
    0 unknown: no change); float64 where the weight is added."""
    scores = np.log(np.maximum(probs, 1e-30))
    if hint_weight > 0 and len(hints):
        # per hint value, what each label gets: 0 unknown, 1 where no token ends, 2 where one does
        added = hint_weight * np.stack((np.zeros_like(IS_TOKEN_END), ~IS_TOKEN_END, IS_TOKEN_END)).astype(np.float64)
        scores = scores + added[np.asarray(hints).astype(np.int64)]
    return scores


def _decode(text: str, starts: np.ndarray, ends: np.ndarray, probs: np.ndarray, hints: Optional[np.ndarray] = None,
            hint_weight: float = 0.0, codes: Optional[np.ndarray] = None, space: Optional[np.ndarray] = None
            ) -> np.ndarray:
    """A label per character from the probabilities of the pieces (``starts``, ``ends``): each
    piece's best label (``hinted_scores`` with the rule tokenizer's ``hints``, one per piece) on
    its last character, except that a piece before whitespace or at the end of the text ends a
    token, and the token before a blank line or at the end of the text ends a sentence; every
    other character is ``INSIDE``. ``codes``: ``code_points(text)``; ``space``: per character, is
    it whitespace (``space_codes(codes)``); each computed when None."""
    labels = np.zeros(len(text), dtype=np.int32)
    if not len(ends):
        return labels
    if hints is not None and hint_weight > 0:
        probs = hinted_scores(probs, hints, hint_weight)
    piece_labels = probs.argmax(axis=1).astype(np.int32)
    codes = code_points(text) if codes is None else codes
    space = space_codes(codes) if space is None else space
    forced = np.append(space, True)[ends]  # whitespace or the end of the text follows
    at = np.flatnonzero(forced & ~IS_TOKEN_END[piece_labels])
    piece_labels[at] = probs[at, 1:].argmax(axis=1) + 1
    labels[ends - 1] = piece_labels
    token_ends = np.flatnonzero(IS_TOKEN_END[labels])
    newlines = np.cumsum(codes == 10)
    blank_after = newlines[token_ends[1:]] - newlines[token_ends[:-1]] >= 2
    at = token_ends[np.append(blank_after, True)]
    labels[at] = np.where(IS_MWT[labels[at]], 4, 2)
    return labels
