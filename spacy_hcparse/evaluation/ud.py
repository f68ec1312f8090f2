"""UD-style evaluation on the gold tokenization, and the Doc <-> CoNLL-U glue the CLI and scripts share.

Two evaluations, two names (see STYLE.md): spaCy's Scorer gives ``dep_uas``/``dep_las`` with
punctuation dropped; this module gives ``ud_uas``/``ud_las`` from CoNLL-U files as UD's evaluation
does: every syntactic word counts (punctuation included) and labels are compared without their
subtypes (``nmod:poss`` counts as ``nmod``; spaCy's ``ROOT`` as ``root``).

Gold and system files must hold the same syntactic words in the same sentences (gold
tokenization): this is checked, and a mismatch raises ``ValueError`` naming both files and lines.
System files may hold any head assignment (several roots, cycles): only the gold file has to be
trees. Heads are 1-based with 0 the root, as in CoNLL-U.

Non-projective arcs: the arc ``h -> d`` is non-projective when a word strictly between ``h`` and
``d`` is not a descendant of ``h`` (an arc from the root is never non-projective). Precision is the
share of system non-projective arcs whose dependent has the gold head; recall is the share of gold
non-projective arcs whose dependent gets the gold head in the system output. Both unlabelled.
"""
from collections import Counter
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc

from ..conllu import Sentence, parse_conllu, read_conllu

PathLike = Union[str, Path]


# ----- reading ---------------------------------------------------------------------------------
def read_system(path: PathLike) -> List[Sentence]:
    """Sentences of a system CoNLL-U file: each line is checked, the heads need not form trees."""
    with Path(path).open(encoding="utf8") as handle:
        return parse_system(handle, str(path))


def parse_system(lines: Iterable[str], name: str = "<input>") -> List[Sentence]:
    """``read_system`` over lines; ``name`` is the file name used in error messages."""
    return list(parse_conllu(lines, name, check_trees=False))


def ud_label(deprel: str) -> str:
    """The universal part of a label: ``nmod:poss`` -> ``nmod``, spaCy's ``ROOT`` -> ``root``."""
    label = deprel.split(":", 1)[0]
    return "root" if label == "ROOT" else label


# ----- tree properties -------------------------------------------------------------------------
def nonprojective_arcs(heads: Sequence[int]) -> Set[int]:
    """Dependents (1-based) whose arc is non-projective; ``heads[i]`` is word ``i + 1``'s head.

    Works on any head list (cycles included): a word is a descendant of ``h`` when walking up its
    heads reaches ``h``.
    """
    n = len(heads)
    parent = [0] + list(heads)
    out = set()
    for d in range(1, n + 1):
        h = parent[d]
        if h == 0 or not 1 <= h <= n:
            continue
        lo, hi = min(h, d), max(h, d)
        if any(not _dominates(parent, h, k) for k in range(lo + 1, hi)):
            out.add(d)
    return out


def _dominates(parent: List[int], h: int, k: int) -> bool:
    seen = set()
    while k not in seen and 1 <= k < len(parent):
        if k == h:
            return True
        seen.add(k)
        k = parent[k]
    return k == h


# ----- scoring ---------------------------------------------------------------------------------
def score_conllu(gold_path: PathLike, system_path: PathLike) -> Dict:
    """UD metrics of ``system_path`` against ``gold_path`` (see ``score_sentences``)."""
    gold = list(read_conllu(gold_path))
    system = read_system(system_path)
    return score_sentences(gold, system, str(gold_path), str(system_path))


def score_sentences(
    gold: Sequence[Sentence], system: Sequence[Sentence], gold_name: str = "gold", system_name: str = "system"
) -> Dict:
    """``ud_uas``, ``ud_las``, exact match, per-label P/R/F and non-projective arc P/R.

    Per label (universal part only): ``gold`` words with that gold label, ``system`` words with
    that predicted label, ``correct`` words with both head and label right; ``p``/``r``/``f`` from
    those. Exact match: share of sentences with every head (``exact_uas``) or head and label
    (``exact_las``) right.
    """
    _check_aligned(gold, system, gold_name, system_name)
    words = head_ok = label_ok = exact_u = exact_l = 0
    gold_labels, sys_labels, correct_labels = Counter(), Counter(), Counter()
    np_gold = np_sys = np_gold_hit = np_sys_hit = 0
    for g, s in zip(gold, system):
        g_heads = [w.head for w in g.words]
        s_heads = [w.head for w in s.words]
        sent_u = sent_l = True
        for gw, sw in zip(g.words, s.words):
            gl, sl = ud_label(gw.deprel), ud_label(sw.deprel)
            gold_labels[gl] += 1
            sys_labels[sl] += 1
            words += 1
            if gw.head == sw.head:
                head_ok += 1
                if gl == sl:
                    label_ok += 1
                    correct_labels[gl] += 1
                else:
                    sent_l = False
            else:
                sent_u = sent_l = False
        exact_u += sent_u
        exact_l += sent_l
        g_np, s_np = nonprojective_arcs(g_heads), nonprojective_arcs(s_heads)
        np_gold += len(g_np)
        np_sys += len(s_np)
        np_gold_hit += sum(g_heads[d - 1] == s_heads[d - 1] for d in g_np)
        np_sys_hit += sum(g_heads[d - 1] == s_heads[d - 1] for d in s_np)
    n_sents = len(gold)
    return {
        "ud_uas": _ratio(head_ok, words),
        "ud_las": _ratio(label_ok, words),
        "exact_uas": _ratio(exact_u, n_sents),
        "exact_las": _ratio(exact_l, n_sents),
        "words": words,
        "sentences": n_sents,
        "ud_las_per_label": {
            label: _prf(correct_labels[label], sys_labels[label], gold_labels[label])
            for label in sorted(set(gold_labels) | set(sys_labels))
        },
        "nonprojective": {
            "gold_arcs": np_gold,
            "system_arcs": np_sys,
            "precision": _ratio(np_sys_hit, np_sys),
            "recall": _ratio(np_gold_hit, np_gold),
        },
    }


def _check_aligned(gold, system, gold_name, system_name) -> None:
    if len(gold) != len(system):
        raise ValueError(
            f"{gold_name} has {len(gold)} sentences but {system_name} has {len(system)}: "
            "the evaluation needs the gold tokenization and sentence split"
        )
    for g, s in zip(gold, system):
        g_forms = [w.form for w in g.words]
        s_forms = [w.form for w in s.words]
        if g_forms != s_forms:
            raise ValueError(
                f"{system_name}:{s.line}: words differ from {gold_name}:{g.line} "
                f"({' '.join(s_forms[:8])} ... vs {' '.join(g_forms[:8])} ...)"
            )


def _ratio(a: int, b: int) -> Optional[float]:
    return a / b if b else None


def _prf(correct: int, predicted: int, gold: int) -> Dict:
    p, r = _ratio(correct, predicted), _ratio(correct, gold)
    f = 2 * p * r / (p + r) if p and r else 0.0
    return {"gold": gold, "system": predicted, "correct": correct, "p": p, "r": r, "f": f}


# ----- Docs <-> CoNLL-U ------------------------------------------------------------------------
def input_doc(nlp: Language, sentence: Sentence) -> Doc:
    """An unparsed Doc of one gold sentence: gold words, the sentence start preset (all parsers
    see the same input)."""
    words = [w.form for w in sentence.words]
    return Doc(nlp.vocab, words=words, sent_starts=[i == 0 for i in range(len(words))])


def gold_doc(nlp: Language, sentence: Sentence) -> Doc:
    """The reference Doc of one gold sentence (heads and labels; ``root`` becomes ``ROOT``)."""
    words = [w.form for w in sentence.words]
    heads = [w.head - 1 if w.head > 0 else i for i, w in enumerate(sentence.words)]
    deps = ["ROOT" if w.head == 0 else w.deprel for w in sentence.words]
    return Doc(nlp.vocab, words=words, heads=heads, deps=deps)


def doc_rows(doc: Doc) -> List[Tuple[str, int, str]]:
    """(form, head, label) per token of a Doc written as one CoNLL-U sentence: heads relative to
    the doc (1-based, 0 for every token that heads itself), ``ROOT`` written as ``root``."""
    rows = []
    for token in doc:
        head = 0 if token.head.i == token.i else token.head.i + 1
        label = token.dep_ or "dep"
        rows.append((token.text, head, "root" if label == "ROOT" else label))
    return rows


def sentence_conllu(doc: Doc, source: Optional[Sentence] = None) -> str:
    """One CoNLL-U sentence block for ``doc``; with ``source`` its comments and columns other than
    HEAD and DEPREL are kept (the gold file and the output then align line by line on words)."""
    lines = list(source.comments) if source is not None else []
    for i, (form, head, label) in enumerate(doc_rows(doc), start=1):
        if source is not None:
            w = source.words[i - 1]
            cols = [str(i), w.form, w.lemma, w.upos, w.xpos, w.feats, str(head), label, "_", w.misc]
        else:
            space = "_" if doc[i - 1].whitespace_ or i == len(doc) else "SpaceAfter=No"
            cols = [str(i), form, "_", "_", "_", "_", str(head), label, "_", space]
        lines.append("\t".join(cols))
    return "\n".join(lines) + "\n\n"

