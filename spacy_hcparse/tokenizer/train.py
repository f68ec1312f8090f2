"""Training the UDTokenizer on a treebank, choosing the best epoch on a development treebank.

Each step reads a batch of labelled texts (``data.labelled_texts`` as ``data.piece_examples``,
about ``batch_pieces`` pieces) and takes an Adam step on the mean cross-entropy per piece. Every
``eval_every`` steps (and after the last step) the tokenizer segments the development
treebank's raw text twice, with paragraph breaks as blank lines and as spaces, and is scored with
the CoNLL 2018 evaluation (``tokenizer_scores``), with the optimizer's running averages of the
weights (``average``) in place of the last step's; the score it is chosen by
(``selection_score``) is Words F1, the Sentences F1 parting near-ties (``select = "words"``), or
the mean of Words F1 and the two Sentences F1 (``"words_sentences"``). Training stops after
``patience`` evaluations without a better score or after ``max_epochs``. Then the best weights decode the development text with
each of ``hint_weights`` (``UDTokenizer``'s ``hint_weight``: how far decoding leans to the rule
tokenizer) and the tokenizer keeps the weight that scores best (the largest of equals): where the
training text is small the rule tokenizer is often the better judge of token ends.
"""
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import spacy
import srsly
from thinc.api import Adam, fix_random_seed
from thinc.types import Ragged

from ..evaluation.conll18 import Treebank, evaluate, parse_treebank, read_treebank
from ..evaluation.raw_text import raw_documents
from ..evaluation.system_output import doc_to_conllu
from .data import PieceExample, labelled_texts, multiword_pairs, piece_examples, split_table
from .features import HASHED_COLUMNS, LABELS, UNKNOWN
from .lexicon import MultiwordLexicon
from .tokenizer import UDTokenizer

PathLike = Union[str, Path]


@dataclass
class TrainSettings:
    """How the tokenizer trains.

    max_epochs (int): passes over the training texts at most.
    batch_pieces (int): pieces per batch, about.
    learn_rate (float): Adam's learning rate.
    eval_every (int): steps between evaluations on the development treebank; 0: about
        ``EVALUATIONS`` over the whole run (``max_epochs`` passes), 25 to 100 steps apart.
    patience (int): evaluations without a better score before training stops.
    flat_share (float): share of training documents whose paragraph breaks are spaces.
    piece_dropout (float): share of pieces whose hashed text (the piece, its first and last three
        characters) is replaced by an unknown value in training, so that the model learns to read
        shapes and neighbours, not only pieces it has seen.
    seed (int): the random seed (weights, order, flat documents).
    average (bool): evaluate and keep the optimizer's running averages of the weights.
    select (str): what the best evaluation is chosen by: "words" (Words F1) or
        "words_sentences" (see ``selection_score``).
    hint_weights (Tuple[float, ...]): the decoding weights of the rule hint to choose from on the
        development treebank after training (empty: keep the tokenizer's).
    """

    max_epochs: int = 30
    batch_pieces: int = 2000
    learn_rate: float = 0.002
    eval_every: int = 0
    patience: int = 10
    flat_share: float = 0.5
    piece_dropout: float = 0.2
    seed: int = 0
    average: bool = True
    select: str = "words"
    hint_weights: Tuple[float, ...] = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


@dataclass
class Evaluation:
    """One evaluation during training."""

    epoch: int
    step: int
    loss: float
    scores: Dict[str, float]
    score: float
    seconds: float


@dataclass
class TrainResult:
    tokenizer: UDTokenizer
    best: Optional[Evaluation]
    history: List[Evaluation] = field(default_factory=list)
    hint_scores: Dict[float, Dict[str, float]] = field(default_factory=dict)  # weight -> dev scores


def tokenizer_scores(tokenizer: UDTokenizer, gold: Treebank, *, paragraphs: bool = True, group: int = 0) -> Dict[str, float]:
    """CoNLL 2018 F1 of Tokens, Words and Sentences of ``tokenizer`` on the raw text
    of ``gold`` (``raw_documents(gold, group, paragraphs)``)."""
    docs = raw_documents(gold, group, paragraphs=paragraphs)
    text = "".join(doc_to_conllu(doc) for doc in tokenizer.pipe(d.text for d in docs))
    scores = evaluate(gold, parse_treebank(text.splitlines(), "<tokenizer output>"))
    return {m: scores[m].f1 for m in ("Tokens", "Words", "Sentences")}


EVALUATIONS = 12  # evaluations over a whole run where eval_every is 0
SELECTIONS = ("words", "words_sentences")
SENTENCE_TIEBREAK = 0.01  # weight of the Sentences F1 in "words": it only parts near-equal Words F1


def selection_score(blank: Dict[str, float], flat: Dict[str, float], select: str = "words") -> float:
    """What training chooses by: Words F1 plus ``SENTENCE_TIEBREAK`` times the mean of the two
    Sentences F1, with blank lines and without (``select = "words"``), or the mean of Words F1 and
    that mean (``"words_sentences"``)."""
    sentences = (blank["Sentences"] + flat["Sentences"]) / 2
    if select == "words":
        return blank["Words"] + SENTENCE_TIEBREAK * sentences
    if select == "words_sentences":
        return (blank["Words"] + sentences) / 2
    raise ValueError(f"select must be one of {SELECTIONS}, got {select!r}")


def train_tokenizer(tokenizer: UDTokenizer, train: Treebank, dev: Treebank, settings: TrainSettings = TrainSettings(),
                    on_eval: Optional[Callable[[Evaluation], None]] = None) -> TrainResult:
    """Train ``tokenizer`` (in place: its model and lexicon are replaced) on ``train``, choose on
    ``dev`` (see module docstring); ``on_eval`` is called after each evaluation. The returned
    tokenizer holds the best weights."""
    if settings.select not in SELECTIONS:
        raise ValueError(f"select must be one of {SELECTIONS}, got {settings.select!r}")
    fix_random_seed(settings.seed)
    texts = labelled_texts(train, flat_share=settings.flat_share, seed=settings.seed)
    if not texts:
        raise ValueError(f"{train.name}: no text to train the tokenizer on")
    tokenizer.lexicon = MultiwordLexicon.from_pairs(multiword_pairs(train))
    tokenizer.splits = split_table(texts)
    examples = piece_examples(texts, tokenizer.splits, tokenizer.rule_ends)
    tokenizer.model = tokenizer._build_model()
    tokenizer.trained = True
    model = tokenizer.model
    optimizer = Adam(settings.learn_rate)
    rng = random.Random(settings.seed)
    nprng = np.random.default_rng(settings.seed)
    result = TrainResult(tokenizer, None)
    best_bytes, since_best, step, losses = None, 0, 0, []
    start = time.perf_counter()

    def evaluate_now(epoch: int) -> bool:
        nonlocal best_bytes, since_best
        averages = optimizer.averages if settings.average and optimizer.averages else {}
        with model.use_params(averages):
            blank = tokenizer_scores(tokenizer, dev, paragraphs=True)
            flat = tokenizer_scores(tokenizer, dev, paragraphs=False)
            weights = model.to_bytes()
        scores = {**blank, "Sentences_flat": flat["Sentences"]}
        ev = Evaluation(epoch, step, float(np.mean(losses)) if losses else 0.0, scores,
                        selection_score(blank, flat, settings.select), time.perf_counter() - start)
        losses.clear()
        result.history.append(ev)
        if result.best is None or ev.score > result.best.score:
            result.best, best_bytes, since_best = ev, weights, 0
        else:
            since_best += 1
        if on_eval is not None:
            on_eval(ev)
        return since_best >= settings.patience

    eval_every = settings.eval_every or evaluation_interval(len(list(_batches(examples, settings.batch_pieces))),
                                                            settings.max_epochs)
    epoch = 0
    for epoch in range(settings.max_epochs):
        rng.shuffle(examples)
        for batch in _batches(examples, settings.batch_pieces):
            losses.append(_update(model, batch, optimizer, settings.piece_dropout, nprng))
            step += 1
            if step % eval_every == 0 and evaluate_now(epoch):
                break
        else:
            continue
        break
    if not result.history or result.history[-1].step != step:
        evaluate_now(epoch)
    if best_bytes is not None:
        model.from_bytes(best_bytes)
    if settings.hint_weights:
        result.hint_scores = choose_hint_weight(tokenizer, dev, settings.hint_weights, settings.select)
    return result


def evaluation_interval(steps_per_epoch: int, epochs: int) -> int:
    """Steps between evaluations for ``eval_every = 0``: about ``EVALUATIONS`` over ``epochs``
    passes of ``steps_per_epoch`` steps, at least 25 and at most 100 steps apart (EWT's train file:
    about 100; nine tenths of a small dev file: 25)."""
    return int(min(max(steps_per_epoch * epochs // EVALUATIONS, 25), 100))


def choose_hint_weight(tokenizer: UDTokenizer, dev: Treebank, weights: Sequence[float],
                       select: str = "words") -> Dict[float, Dict[str, float]]:
    """Set ``tokenizer.cfg["hint_weight"]`` to the one of ``weights`` whose decoding of ``dev``
    scores best by ``selection_score``, the largest of equals (where dev cannot tell weights apart,
    as a small held-out set often cannot, decoding leans on spaCy's rules, not on a model trained
    on little text); returns every weight's scores (with the selection score as ``"score"``)."""
    out: Dict[float, Dict[str, float]] = {}
    best = None
    for weight in sorted(float(w) for w in weights):
        tokenizer.cfg["hint_weight"] = weight
        blank = tokenizer_scores(tokenizer, dev, paragraphs=True)
        flat = tokenizer_scores(tokenizer, dev, paragraphs=False)
        out[weight] = {**blank, "Sentences_flat": flat["Sentences"], "score": selection_score(blank, flat, select)}
        if best is None or out[weight]["score"] >= out[best]["score"]:
            best = weight
    if best is not None:
        tokenizer.cfg["hint_weight"] = best
    return out


def _batches(examples: Sequence[PieceExample], batch_pieces: int):
    batch, size = [], 0
    for item in examples:
        batch.append(item)
        size += len(item)
        if size >= batch_pieces:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _update(model, batch: Sequence[PieceExample], optimizer, piece_dropout: float, rng: np.random.Generator) -> float:
    """One step on ``batch``: the mean cross-entropy per piece, before the step."""
    ops = model.ops
    feats = np.concatenate([item.features for item in batch])
    if piece_dropout > 0:
        dropped = rng.random(len(feats)) < piece_dropout
        feats[np.ix_(dropped, HASHED_COLUMNS)] = UNKNOWN
    lengths = [len(item) for item in batch]
    gold = np.concatenate([item.labels for item in batch])
    X = Ragged(ops.asarray(feats, dtype="uint64"), ops.asarray1i(lengths))
    probs, backprop = model.begin_update(X)
    probs_np = ops.to_numpy(probs)
    n = len(gold)
    loss = float(-np.log(np.maximum(probs_np[np.arange(n), gold], 1e-12)).mean())
    truth = np.zeros_like(probs_np)
    truth[np.arange(n), gold] = 1.0
    backprop(ops.asarray((probs_np - truth) / n, dtype="float32"))
    model.finish_update(optimizer)
    return loss


TABLE_HEAD = ("E", "#", "LOSS", "TOKENS", "WORDS", "SENTS", "SENTS_FLAT", "SCORE", "SECS")
TABLE_WIDTHS = (3, 6, 8, 7, 7, 7, 10, 7, 6)


def table_row(ev: Evaluation) -> str:
    """One line of the training table (F1 and the score in %), as spaCy's training prints."""
    s = ev.scores
    cells = (ev.epoch, ev.step, f"{ev.loss:.4f}", f"{100 * s['Tokens']:.2f}", f"{100 * s['Words']:.2f}",
             f"{100 * s['Sentences']:.2f}", f"{100 * s['Sentences_flat']:.2f}", f"{100 * ev.score:.2f}",
             f"{ev.seconds:.0f}")
    return "  ".join(str(c).rjust(w) for c, w in zip(cells, TABLE_WIDTHS))


def table_header() -> str:
    head = "  ".join(h.rjust(w) for h, w in zip(TABLE_HEAD, TABLE_WIDTHS))
    return head + "\n" + "  ".join("-" * w for w in TABLE_WIDTHS)


def train_files(train_path: PathLike, dev_path: PathLike, output: PathLike, *, lang: str = "xx",
                cfg: Optional[Dict] = None, settings: TrainSettings = TrainSettings(),
                log: Callable[[str], None] = print) -> TrainResult:
    """Train a UDTokenizer on the CoNLL-U file ``train_path``, choose on ``dev_path``, and write
    ``output/tokenizer`` (the best tokenizer, ``UDTokenizer.to_disk``) and ``output/scores.json``
    (settings, the best evaluation and every evaluation)."""
    train, dev = read_treebank(train_path), read_treebank(dev_path)
    tokenizer = UDTokenizer(spacy.blank(lang).vocab, **(cfg or {}))
    log(f"training the tokenizer on {train_path} ({len(train.sentences)} sentences, {len(train.words)} words), "
        f"choosing on {dev_path} ({len(dev.sentences)} sentences); F1 in %")
    log(table_header())
    result = train_tokenizer(tokenizer, train, dev, settings, on_eval=lambda ev: log(table_row(ev)))
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.to_disk(out / "tokenizer")
    report = {"train": str(train_path), "dev": str(dev_path), "cfg": tokenizer.cfg, "settings": asdict(settings),
              "multiword_forms": len(tokenizer.lexicon), "cut_runs": len(tokenizer.splits),
              "best": asdict(result.best) if result.best else None, "history": [asdict(e) for e in result.history],
              "hint_weights": [{"hint_weight": w, **s} for w, s in result.hint_scores.items()]}
    srsly.write_json(out / "scores.json", report)
    for weight, s in result.hint_scores.items():
        log(f"hint weight {weight:g}: Words {100 * s['Words']:.2f}, Sentences {100 * s['Sentences']:.2f} / "
            f"{100 * s['Sentences_flat']:.2f}, score {100 * s['score']:.2f}")
    if result.best is not None:
        log(f"best: step {result.best.step}, score {100 * result.best.score:.2f}, hint weight "
            f"{tokenizer.cfg['hint_weight']:g}; wrote {out / 'tokenizer'}")
    return result
