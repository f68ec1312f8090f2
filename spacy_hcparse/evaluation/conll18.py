"""The CoNLL 2018 shared task evaluation: a system CoNLL-U against gold, on any tokenization.

The metrics are those of the shared task's ``conll18_ud_eval.py`` (version 1.2), with the same
semantics, so the figures can be compared with published UD results:

* Gold and system files must hold the same text once whitespace is removed: the concatenation of
  their token FORMs, without characters of Unicode category Zs, must be equal. Every token is a
  span of that character sequence; a sentence spans its tokens.
* ``Tokens`` and ``Sentences``: spans that start and end at the same characters.
* ``Words``: syntactic words aligned between the files. A word outside multiword tokens aligns
  when its span is the same. Around multiword tokens (``3-4 don't``) the smallest stretch of text
  that holds whole multiword tokens of both files is found, and the words inside it are aligned by
  the longest common subsequence of their lowercased FORMs.
* On aligned words: ``UPOS``, ``XPOS``, ``UFeats`` (the universal features only, in sorted order),
  ``AllTags`` (the three), ``Lemmas`` (any system lemma is right where the gold lemma is ``_``),
  ``UAS`` (the system head is aligned to the gold head, or both are the root), ``LAS`` (and the
  universal part of DEPREL, ``nmod:poss`` -> ``nmod``, is the same).
* ``CLAS``, ``MLAS``, ``BLEX`` count only words with a content relation (``CONTENT_DEPRELS``; in
  the system file the system's relation decides, in the gold file the gold one). MLAS adds UPOS,
  UFeats and the function-word children (``FUNCTIONAL_DEPRELS``, with their aligned word, relation,
  UPOS and UFeats, in order); BLEX adds the lemma.

Each metric is a ``Score``: precision (over system items), recall (over gold items), F1, and,
for metrics on aligned words, the accuracy over aligned words.

Reading is strict: a malformed line raises ``ConlluError`` naming the file and line (column
count, ids out of sequence, a multiword token out of place, a HEAD that is not an integer in
0..n, an empty FORM). Both files must be trees with one root per sentence, as the official script
requires; ``require_trees=False`` accepts any heads in 0..n. Unlike the official script, repeated
blank lines and a missing blank line at the end of the file are accepted, and the words of a
multiword token are checked like any other word. Empty nodes (``8.1``) are skipped. Spaces are
Zs characters, as in the official script: a FORM holding a tab or newline cannot be written in
CoNLL-U anyway.

Command line: ``python -m spacy_hcparse.evaluation.conll18 GOLD SYSTEM [--json]``.
"""
import argparse
import bisect
import json
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ..conllu import ConlluError, read_lines

PathLike = Union[str, Path]

METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas",
           "UAS", "LAS", "CLAS", "MLAS", "BLEX")

CONTENT_DEPRELS = frozenset({
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl", "dislocated",
    "advcl", "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod", "conj", "fixed",
    "flat", "compound", "list", "parataxis", "orphan", "goeswith", "reparandum", "root", "dep",
})
FUNCTIONAL_DEPRELS = frozenset({"aux", "cop", "mark", "det", "clf", "case", "cc"})
UNIVERSAL_FEATURES = frozenset({
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy", "Number",
    "Case", "Definite", "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice", "Evident",
    "Polarity", "Person", "Polite",
})

ROOT = -1  # head of a word attached to the root
UNALIGNED = -2  # a system word's head (or child) that has no gold counterpart


class TextMismatchError(ValueError):
    """Gold and system files do not hold the same non-whitespace text."""


@dataclass(frozen=True)
class Score:
    """Counts of one metric. ``aligned`` is None for Tokens, Sentences and Words."""

    correct: int
    gold: int
    system: int
    aligned: Optional[int] = None

    @property
    def precision(self) -> float:
        return self.correct / self.system if self.system else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        total = self.system + self.gold
        return 2 * self.correct / total if total else 0.0

    @property
    def aligned_accuracy(self) -> Optional[float]:
        """Share of aligned words that are right; None where the metric has no aligned words
        (Tokens, Sentences, Words), 0.0 when nothing aligned."""
        if self.aligned is None:
            return None
        return self.correct / self.aligned if self.aligned else 0.0

    def as_dict(self) -> Dict[str, Optional[float]]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "aligned_accuracy": self.aligned_accuracy, "correct": self.correct,
                "gold": self.gold, "system": self.system, "aligned": self.aligned}


@dataclass
class Word:
    """A syntactic word as the evaluation sees it. ``start``/``end`` index ``Treebank.chars``
    (end exclusive); inside a multiword token they are the token's. ``head`` indexes
    ``Treebank.words`` (``ROOT`` for the root); ``feats`` holds the universal features only and
    ``deprel`` the universal part of the relation."""

    start: int
    end: int
    multiword: bool
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    deprel: str
    head: int
    line: int

    @property
    def is_content(self) -> bool:
        return self.deprel in CONTENT_DEPRELS

    @property
    def is_functional(self) -> bool:
        return self.deprel in FUNCTIONAL_DEPRELS


@dataclass
class Treebank:
    """A CoNLL-U file read for the evaluation.

    ``chars``: the FORMs of all tokens concatenated, Zs characters removed. ``tokens`` and
    ``sentences``: (start, end) spans of ``chars``. ``token_forms``/``space_after`` are the
    surface tokens as written (multiword tokens as one), with ``SpaceAfter=No`` read from MISC.
    ``sentence_comments`` holds each sentence's comment lines, ``sentence_lines`` its first line.
    """

    name: str
    chars: str = ""
    tokens: List[Tuple[int, int]] = field(default_factory=list)
    token_lines: List[int] = field(default_factory=list)
    token_forms: List[str] = field(default_factory=list)
    space_after: List[bool] = field(default_factory=list)
    words: List[Word] = field(default_factory=list)
    sentences: List[Tuple[int, int]] = field(default_factory=list)
    sentence_lines: List[int] = field(default_factory=list)
    sentence_comments: List[List[str]] = field(default_factory=list)
    sentence_tokens: List[Tuple[int, int]] = field(default_factory=list)  # token index range

    def first_sentences(self, n: int) -> "Treebank":
        """The treebank cut after its first ``n`` sentences (heads keep their indices)."""
        if n >= len(self.sentences):
            return self
        end_token = self.sentence_tokens[n - 1][1] if n > 0 else 0
        end_char = self.tokens[end_token - 1][1] if end_token else 0
        return Treebank(
            self.name, self.chars[:end_char], self.tokens[:end_token], self.token_lines[:end_token],
            self.token_forms[:end_token], self.space_after[:end_token],
            [w for w in self.words if w.start < end_char], self.sentences[:n], self.sentence_lines[:n],
            self.sentence_comments[:n], self.sentence_tokens[:n])

    def functional_children(self) -> List[List[int]]:
        """Per word, its children with a functional relation, in word order."""
        children: List[List[int]] = [[] for _ in self.words]
        for i, w in enumerate(self.words):
            if w.head != ROOT and w.is_functional:
                children[w.head].append(i)
        return children


# ----- reading ---------------------------------------------------------------------------------
def read_treebank(path: PathLike, *, require_trees: bool = True) -> Treebank:
    """Read a CoNLL-U file (``"-"``: stdin) for the evaluation (see the module docstring)."""
    return parse_treebank(read_lines(path), "<stdin>" if str(path) == "-" else str(path),
                          require_trees=require_trees)


def parse_treebank(lines: Iterable[str], name: str = "<input>", *, require_trees: bool = True) -> Treebank:
    """``read_treebank`` over lines; ``name`` is the file name used in error messages."""
    bank = Treebank(name)
    chars: List[str] = []
    block: List[Tuple[int, str]] = []
    comments: List[str] = []
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if lineno == 1:
            line = line.lstrip("\ufeff")
        if not line.strip():
            if block:
                _add_sentence(bank, chars, block, comments, name, require_trees)
            block, comments = [], []  # comment lines without a sentence are dropped
        elif line.startswith("#") and not block:
            comments.append(line)
        else:
            block.append((lineno, line))
    if block:
        _add_sentence(bank, chars, block, comments, name, require_trees)
    bank.chars = "".join(chars)
    return bank


def _add_sentence(bank: Treebank, chars: List[str], block, comments, name: str, require_trees: bool) -> None:
    offset = len(bank.words)
    first_token = len(bank.tokens)
    mwt_end = 0  # last word id of the multiword token being read
    for lineno, line in block:
        cols = line.split("\t")
        if len(cols) != 10:
            raise ConlluError(f"{name}:{lineno}: expected 10 tab-separated columns, got {len(cols)}")
        ident, form = cols[0], cols[1]
        if not form:
            raise ConlluError(f"{name}:{lineno}: empty FORM column")
        n = len(bank.words) - offset  # words read so far in this sentence
        if "." in ident:
            _check_empty_node(ident, n, name, lineno)
            continue
        if "-" in ident:
            start, end = _range_id(ident, name, lineno)
            if start != n + 1 or end <= start or n < mwt_end:
                raise ConlluError(f"{name}:{lineno}: multiword token {ident!r} out of place "
                                  f"(the next word is {n + 1})")
            mwt_end = end
            _add_token(bank, chars, form, cols[9], name, lineno)
            continue
        if not ident.isdigit() or int(ident) != n + 1:
            raise ConlluError(f"{name}:{lineno}: word id {ident!r} out of sequence (expected {n + 1})")
        multiword = n + 1 <= mwt_end
        if not multiword:
            _add_token(bank, chars, form, cols[9], name, lineno)
        start, end = bank.tokens[-1]
        try:
            head = int(cols[6])
        except ValueError:
            raise ConlluError(f"{name}:{lineno}: HEAD {cols[6]!r} is not an integer") from None
        bank.words.append(Word(start, end, multiword, form, cols[2], cols[3], cols[4],
                               universal_feats(cols[5]), universal_deprel(cols[7]), head, lineno))
    n = len(bank.words) - offset
    first_line = block[0][0]
    if n == 0:
        raise ConlluError(f"{name}:{first_line}: sentence has no words")
    if mwt_end > n:
        raise ConlluError(f"{name}:{first_line}: a multiword token reaches word {mwt_end}, the sentence has {n} words")
    _link_heads(bank.words, offset, name, require_trees)
    bank.sentences.append((bank.tokens[first_token][0], bank.tokens[-1][1]))
    bank.sentence_lines.append(first_line)
    bank.sentence_comments.append(list(comments))
    bank.sentence_tokens.append((first_token, len(bank.tokens)))


def _add_token(bank: Treebank, chars: List[str], form: str, misc: str, name: str, lineno: int) -> None:
    text = strip_spaces(form)
    if not text:
        raise ConlluError(f"{name}:{lineno}: FORM {form!r} has only spaces")
    start = len(chars)
    chars.extend(text)
    bank.tokens.append((start, len(chars)))
    bank.token_lines.append(lineno)
    bank.token_forms.append(form)
    bank.space_after.append("SpaceAfter=No" not in misc.split("|"))


def _range_id(ident: str, name: str, lineno: int) -> Tuple[int, int]:
    parts = ident.split("-")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ConlluError(f"{name}:{lineno}: malformed multiword token id {ident!r}")
    return int(parts[0]), int(parts[1])


def _check_empty_node(ident: str, n: int, name: str, lineno: int) -> None:
    parts = ident.split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or int(parts[0]) != n:
        raise ConlluError(f"{name}:{lineno}: empty node {ident!r} out of place (expected {n}.1, {n}.2, ...)")


def _link_heads(words: List[Word], offset: int, name: str, require_trees: bool) -> None:
    """Turn the sentence's 1-based HEADs into ``words`` indices; check one root and no cycle."""
    n = len(words) - offset
    for w in words[offset:]:
        if not 0 <= w.head <= n:
            raise ConlluError(f"{name}:{w.line}: HEAD {w.head} out of range 0..{n}")
        w.head = ROOT if w.head == 0 else offset + w.head - 1
    if not require_trees:
        return
    roots = [w for w in words[offset:] if w.head == ROOT]
    if len(roots) != 1:
        raise ConlluError(f"{name}:{words[offset].line}: sentence has {len(roots)} words attached to the root, "
                          "expected 1 (require_trees=False accepts it)")
    state = [0] * n  # 0 unseen, 1 on the current path, 2 reaches the root
    for i in range(n):
        path = []
        k = offset + i
        while k != ROOT and state[k - offset] == 0:
            state[k - offset] = 1
            path.append(k)
            k = words[k].head
        if k != ROOT and state[k - offset] == 1:
            raise ConlluError(f"{name}:{words[k].line}: word {k - offset + 1} is on a cycle of heads")
        for p in path:
            state[p - offset] = 2


def strip_spaces(text: str) -> str:
    """``text`` without characters of Unicode category Zs, as the evaluation compares text."""
    return "".join(c for c in text if unicodedata.category(c) != "Zs")


def universal_feats(feats: str) -> str:
    """The universal features of a FEATS column, sorted, ``|``-joined (``""`` when none)."""
    return "|".join(sorted(f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES))


def universal_deprel(deprel: str) -> str:
    """The universal part of a relation: ``nmod:poss`` -> ``nmod``."""
    return deprel.split(":", 1)[0]


# ----- alignment -------------------------------------------------------------------------------
def align_words(gold: Sequence[Word], system: Sequence[Word]) -> List[int]:
    """For each system word, the index of its aligned gold word, or ``UNALIGNED``.

    Words outside multiword tokens align when their spans are equal; around multiword tokens
    (in either file) the words of the smallest stretch holding whole multiword tokens of both
    files align by the longest common subsequence of their lowercased FORMs.
    """
    aligned = [UNALIGNED] * len(system)
    gi = si = 0
    while gi < len(gold) and si < len(system):
        g, s = gold[gi], system[si]
        if g.multiword or s.multiword:
            g_lo, s_lo, gi, si = _multiword_stretch(gold, system, gi, si)
            for a, b in _lcs_pairs([w.form.lower() for w in gold[g_lo:gi]], [w.form.lower() for w in system[s_lo:si]]):
                aligned[s_lo + b] = g_lo + a
        elif (g.start, g.end) == (s.start, s.end):
            aligned[si] = gi
            gi += 1
            si += 1
        elif g.start <= s.start:
            gi += 1
        else:
            si += 1
    return aligned


def _multiword_stretch(gold: Sequence[Word], system: Sequence[Word], gi: int, si: int) -> Tuple[int, int, int, int]:
    """(gold start, system start, gold stop, system stop) of the words around the multiword
    token at ``gold[gi]`` or ``system[si]``: a plain word of the other file that starts before
    the multiword token is left out; the stretch grows while a word of either file ends (a plain
    word) or starts (a multiword word) inside it, and a multiword token reaching further extends it."""
    if gold[gi].multiword:
        end = gold[gi].end
        if not system[si].multiword and system[si].start < gold[gi].start:
            si += 1
    else:
        end = system[si].end
        if not gold[gi].multiword and gold[gi].start < system[si].start:
            gi += 1
    g_lo, s_lo = gi, si
    while _inside(gold, gi, end) or _inside(system, si, end):
        if gi < len(gold) and (si >= len(system) or gold[gi].start <= system[si].start):
            word, gi = gold[gi], gi + 1
        else:
            word, si = system[si], si + 1
        if word.multiword:
            end = max(end, word.end)
    return g_lo, s_lo, gi, si


def _inside(words: Sequence[Word], i: int, end: int) -> bool:
    if i >= len(words):
        return False
    w = words[i]
    return w.start < end if w.multiword else w.end <= end


def _lcs_pairs(a: Sequence[str], b: Sequence[str]) -> List[Tuple[int, int]]:
    """Index pairs of a longest common subsequence of ``a`` and ``b``; equal items are taken as
    soon as they are met, otherwise ``a`` advances when that keeps the longest length."""
    n, m = len(a), len(b)
    if not n or not m:
        return []
    best = [[0] * (m + 1) for _ in range(n + 1)]  # best[i][j]: LCS length of a[i:], b[j:]
    for i in range(n - 1, -1, -1):
        row, below = best[i], best[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = max(below[j + 1] + 1 if a[i] == b[j] else 0, below[j], row[j + 1])
    pairs = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


# ----- scoring ---------------------------------------------------------------------------------
def evaluate_files(gold_path: PathLike, system_path: PathLike, *, require_trees: bool = True) -> Dict[str, Score]:
    """The CoNLL 2018 metrics (``METRICS``) of a system CoNLL-U file against a gold one."""
    return evaluate(read_treebank(gold_path, require_trees=require_trees),
                    read_treebank(system_path, require_trees=require_trees))


def evaluate_conllu(gold: str, system: str, *, require_trees: bool = True) -> Dict[str, Score]:
    """``evaluate_files`` on CoNLL-U text held in strings (named ``<gold>``/``<system>`` in errors)."""
    return evaluate(parse_treebank(gold.split("\n"), "<gold>", require_trees=require_trees),
                    parse_treebank(system.split("\n"), "<system>", require_trees=require_trees))


def evaluate(gold: Treebank, system: Treebank) -> Dict[str, Score]:
    """The CoNLL 2018 metrics of ``system`` against ``gold``; raises ``TextMismatchError``
    (naming both files and lines) when their non-whitespace text differs."""
    _check_same_text(gold, system)
    aligned = align_words(gold.words, system.words)
    pairs = [(g, s) for s, g in enumerate(aligned) if g != UNALIGNED]
    scores = {
        "Tokens": spans_score(gold.tokens, system.tokens),
        "Sentences": spans_score(gold.sentences, system.sentences),
        "Words": Score(len(pairs), len(gold.words), len(system.words)),
    }
    gw, sw = gold.words, system.words
    g_children, s_children = gold.functional_children(), system.functional_children()

    def head(words, i, to_gold):
        h = words[i].head
        return h if h == ROOT or to_gold is None else to_gold[h]

    def lemma(g, s):  # any system lemma is right where the gold lemma is "_"
        return gw[g].lemma == "_" or gw[g].lemma == sw[s].lemma

    def children(g, s):
        gold_side = [(c, gw[c].deprel, gw[c].upos, gw[c].feats) for c in g_children[g]]
        sys_side = [(aligned[c], sw[c].deprel, sw[c].upos, sw[c].feats) for c in s_children[s]]
        return gold_side == sys_side

    def tags(g, s):
        return (gw[g].upos, gw[g].xpos, gw[g].feats) == (sw[s].upos, sw[s].xpos, sw[s].feats)

    def attached(g, s):
        return head(gw, g, None) == head(sw, s, aligned)

    def labelled(g, s):
        return attached(g, s) and gw[g].deprel == sw[s].deprel

    checks = {
        "UPOS": lambda g, s: gw[g].upos == sw[s].upos,
        "XPOS": lambda g, s: gw[g].xpos == sw[s].xpos,
        "UFeats": lambda g, s: gw[g].feats == sw[s].feats,
        "AllTags": tags,
        "Lemmas": lemma,
        "UAS": attached,
        "LAS": labelled,
    }
    for metric, check in checks.items():
        scores[metric] = Score(sum(1 for g, s in pairs if check(g, s)), len(gw), len(sw), len(pairs))
    content = [(g, s) for g, s in pairs if gw[g].is_content]
    content_checks = {
        "CLAS": labelled,
        "MLAS": lambda g, s: labelled(g, s) and gw[g].upos == sw[s].upos and gw[g].feats == sw[s].feats
        and children(g, s),
        "BLEX": lambda g, s: labelled(g, s) and lemma(g, s),
    }
    n_gold = sum(1 for w in gw if w.is_content)
    n_system = sum(1 for w in sw if w.is_content)
    for metric, check in content_checks.items():
        scores[metric] = Score(sum(1 for g, s in content if check(g, s)), n_gold, n_system, len(content))
    return scores


def spans_score(gold: Sequence[Tuple[int, int]], system: Sequence[Tuple[int, int]]) -> Score:
    """Spans (start, end) of both files that are equal; both lists are in text order."""
    correct = gi = si = 0
    while gi < len(gold) and si < len(system):
        if system[si][0] < gold[gi][0]:
            si += 1
        elif gold[gi][0] < system[si][0]:
            gi += 1
        else:
            correct += gold[gi][1] == system[si][1]
            gi += 1
            si += 1
    return Score(correct, len(gold), len(system))


def _check_same_text(gold: Treebank, system: Treebank) -> None:
    if gold.chars == system.chars:
        return
    i = next((k for k, (a, b) in enumerate(zip(gold.chars, system.chars)) if a != b),
             min(len(gold.chars), len(system.chars)))

    def where(bank: Treebank) -> str:
        if not bank.tokens:
            return f"{bank.name} (no tokens)"
        if i >= len(bank.chars):
            return f"{bank.name} (ends after line {bank.token_lines[-1]})"
        t = bisect.bisect_right([start for start, _ in bank.tokens], i) - 1
        return f"{bank.name}:{bank.token_lines[t]}"

    raise TextMismatchError(
        f"gold and system text differ at non-space character {i}: {where(gold)} has "
        f"{gold.chars[i:i + 20]!r}, {where(system)} has {system.chars[i:i + 20]!r}")


# ----- output ----------------------------------------------------------------------------------
def format_table(scores: Dict[str, Score]) -> str:
    """The table of the official script's ``-v`` output (percentages)."""
    lines = ["Metric     | Precision |    Recall |  F1 Score | AligndAcc",
             "-----------+-----------+-----------+-----------+-----------"]
    for metric in METRICS:
        s = scores[metric]
        acc = "" if s.aligned_accuracy is None else f"{100 * s.aligned_accuracy:10.2f}"
        lines.append(f"{metric:11}|{100 * s.precision:10.2f} |{100 * s.recall:10.2f} |{100 * s.f1:10.2f} |{acc}")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description="CoNLL 2018 shared task evaluation of SYSTEM against GOLD.")
    parser.add_argument("gold", help="gold CoNLL-U file")
    parser.add_argument("system", help="system CoNLL-U file (any tokenization of the same text)")
    parser.add_argument("--json", action="store_true", help="print every metric's counts and ratios as JSON")
    parser.add_argument("--any-heads", action="store_true", help="accept heads that are not one tree per sentence")
    args = parser.parse_args(argv)
    try:
        scores = evaluate_files(args.gold, args.system, require_trees=not args.any_heads)
    except (ConlluError, TextMismatchError) as err:
        sys.exit(f"error: {err}")
    if args.json:
        print(json.dumps({k: v.as_dict() for k, v in scores.items()}, indent=2))
    else:
        print(format_table(scores))


if __name__ == "__main__":
    main()
