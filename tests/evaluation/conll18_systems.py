"""System files for the CoNLL 2018 evaluation tests: a gold CoNLL-U perturbed at random.

A sentence is a list of tokens; a token is a surface form with ``SpaceAfter`` and its syntactic
words (one for a plain token, several for a multiword token). Heads are 1-based within the
sentence, 0 for the root. Every perturbation keeps the non-space text, so the evaluation can align
the result with the gold file, and ends with ``make_tree`` so the output is one tree per sentence.
"""
import random
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List

DEPRELS = ["nsubj", "obj", "obl", "advmod", "amod", "nmod", "case", "det", "aux", "cop", "mark",
           "cc", "conj", "punct", "compound", "root", "dep", "nmod:poss", "obl:tmod", "flat"]
UPOS = ["NOUN", "VERB", "ADJ", "ADP", "DET", "PRON", "PUNCT", "AUX", "PROPN", "ADV"]


@dataclass
class SysWord:
    form: str
    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = "_"
    head: int = 0
    deprel: str = "dep"


@dataclass
class SysToken:
    form: str
    words: List[SysWord]
    space_after: bool = True


@dataclass
class SysSentence:
    tokens: List[SysToken]
    comments: List[str] = field(default_factory=list)

    def words(self) -> List[SysWord]:
        return [w for t in self.tokens for w in t.words]


def parse(text: str) -> List[SysSentence]:
    """Sentences of CoNLL-U text (well-formed input; empty nodes dropped)."""
    sentences = []
    for block in text.strip("\n").split("\n\n"):
        comments, tokens, mwt_left = [], [], 0
        for line in block.split("\n"):
            if line.startswith("#"):
                comments.append(line)
                continue
            c = line.split("\t")
            if "." in c[0]:
                continue
            space = "SpaceAfter=No" not in c[9].split("|")
            if "-" in c[0]:
                a, b = map(int, c[0].split("-"))
                tokens.append(SysToken(c[1], [], space))
                mwt_left = b - a + 1
                continue
            word = SysWord(c[1], c[2], c[3], c[4], c[5], int(c[6]), c[7])
            if mwt_left:
                tokens[-1].words.append(word)
                mwt_left -= 1
            else:
                tokens.append(SysToken(c[1], [word], space))
        sentences.append(SysSentence(tokens, comments))
    return sentences


def write(sentences: List[SysSentence]) -> str:
    out = []
    for s in sentences:
        out.extend(s.comments)
        i = 0
        for t in s.tokens:
            misc = "_" if t.space_after else "SpaceAfter=No"
            if len(t.words) > 1:
                out.append(f"{i + 1}-{i + len(t.words)}\t{t.form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
            for w in t.words:
                i += 1
                cols = [str(i), w.form, w.lemma, w.upos, w.xpos, w.feats, str(w.head), w.deprel, "_",
                        misc if len(t.words) == 1 else "_"]
                out.append("\t".join(cols))
        out.append("")
    return "\n".join(out) + "\n"


def make_tree(heads: List[int], rng: random.Random) -> List[int]:
    """``heads`` (1-based, 0 root) made one tree: one root kept, the others and one word of each
    cycle attached to it."""
    heads = list(heads)
    n = len(heads)
    roots = [i for i, h in enumerate(heads) if h == 0 or not 1 <= h <= n]
    root = roots[0] if roots else rng.randrange(n)
    heads[root] = 0
    for i in roots[1:]:
        heads[i] = root + 1
    for i in range(n):
        seen, k = set(), i
        while heads[k] != 0:
            if k in seen:
                heads[k] = root + 1
                break
            seen.add(k)
            k = heads[k] - 1
    return heads


def _fix(sentence: SysSentence, rng: random.Random) -> SysSentence:
    words = sentence.words()
    for w, h in zip(words, make_tree([w.head for w in words], rng)):
        w.head = h
    return sentence


def _renumber(sentence: SysSentence, old_ids: List[int], rng: random.Random) -> SysSentence:
    """After words were removed: ``old_ids[k]`` is the new word k's old 1-based id; heads pointing
    at removed words become 0, so ``make_tree`` attaches them to the root."""
    new_of = {old: k + 1 for k, old in enumerate(old_ids)}
    for w in sentence.words():
        w.head = new_of.get(w.head, 0)
    return _fix(sentence, rng)


# ----- perturbations (each takes and returns a list of sentences) -------------------------------
def merge_tokens(sentences, rng, rate=0.05):
    """Merge a token with the next plain token into one plain token (the first word's annotation)."""
    out = []
    for s in sentences:
        tokens, ids, k, old = [], [], 0, 0
        while k < len(s.tokens):
            t = s.tokens[k]
            if (k + 1 < len(s.tokens) and len(t.words) == 1 and len(s.tokens[k + 1].words) == 1
                    and rng.random() < rate):
                nxt = s.tokens[k + 1]
                form = t.form + nxt.form
                tokens.append(SysToken(form, [replace(t.words[0], form=form)], nxt.space_after))
                ids.append(old + 1)
                old += 2
                k += 2
                continue
            tokens.append(t)
            ids.extend(range(old + 1, old + 1 + len(t.words)))
            old += len(t.words)
            k += 1
        out.append(_renumber(SysSentence(tokens, s.comments), ids, rng))
    return out


def split_tokens(sentences, rng, rate=0.05):
    """Split plain tokens of two or more characters at a random place; the second part attaches
    to the first."""
    out = []
    for s in sentences:
        tokens, ids, old = [], [], 0
        for t in s.tokens:
            if len(t.words) == 1 and len(t.form) > 1 and rng.random() < rate:
                cut = rng.randrange(1, len(t.form))
                first = replace(t.words[0], form=t.form[:cut])
                second = SysWord(t.form[cut:], head=-(old + 1), deprel=rng.choice(DEPRELS), upos=rng.choice(UPOS))
                tokens += [SysToken(first.form, [first], False), SysToken(second.form, [second], t.space_after)]
                ids += [old + 1, None]
            else:
                tokens.append(t)
                ids.extend(range(old + 1, old + 1 + len(t.words)))
            old += len(t.words)
        new_of = {o: k + 1 for k, o in enumerate(ids) if o is not None}
        words = [w for t in tokens for w in t.words]
        for w in words:
            w.head = new_of[-w.head] if w.head < 0 else new_of.get(w.head, 0)
        out.append(_fix(SysSentence(tokens, s.comments), rng))
    return out


def multiword_changes(sentences, rng, rate=0.3):
    """Multiword tokens whose words spell the token become plain tokens; pairs of plain tokens
    without space between them become multiword tokens."""
    out = []
    for s in sentences:
        tokens = []
        for k, t in enumerate(s.tokens):
            if len(t.words) > 1 and "".join(w.form for w in t.words) == t.form and rng.random() < rate:
                for j, w in enumerate(t.words):
                    tokens.append(SysToken(w.form, [w], t.space_after if j == len(t.words) - 1 else False))
            elif (tokens and len(t.words) == 1 and len(tokens[-1].words) == 1 and not tokens[-1].space_after
                  and rng.random() < rate):
                prev = tokens.pop()
                tokens.append(SysToken(prev.form + t.form, prev.words + t.words, t.space_after))
            else:
                tokens.append(t)
        out.append(SysSentence(tokens, s.comments))
    return out


def change_annotation(sentences, rng, rate=0.15):
    """Random heads, relations, UPOS, XPOS, features and lemmas on a share of the words."""
    out = []
    for s in sentences:
        words = s.words()
        for w in words:
            if rng.random() < rate:
                w.head = rng.randrange(0, len(words) + 1)
            if rng.random() < rate:
                w.deprel = rng.choice(DEPRELS)
            if rng.random() < rate:
                w.upos = rng.choice(UPOS)
            if rng.random() < rate:
                w.xpos = rng.choice(["NN", "VB", "JJ", "_"])
            if rng.random() < rate:
                w.feats = rng.choice(["_", "Number=Sing", "Number=Plur|Foo=Bar", "Definite=Def|PronType=Art"])
            if rng.random() < rate:
                w.lemma = rng.choice(["_", w.form.lower(), w.form.upper()])
        out.append(_fix(s, rng))
    return out


def split_sentences(sentences, rng, rate=0.1):
    """Cut sentences at a random token boundary."""
    out = []
    for s in sentences:
        if len(s.tokens) < 2 or rng.random() >= rate:
            out.append(s)
            continue
        cut = rng.randrange(1, len(s.tokens))
        n_first = sum(len(t.words) for t in s.tokens[:cut])
        first = SysSentence(s.tokens[:cut], s.comments)
        second = SysSentence(s.tokens[cut:], [])
        for w in first.words():
            w.head = w.head if w.head <= n_first else 0
        for w in second.words():
            w.head = w.head - n_first if w.head > n_first else 0
        out += [_fix(first, rng), _fix(second, rng)]
    return out


def merge_sentences(sentences, rng, rate=0.1):
    """Join a sentence with the next; the second one's root attaches to the first one's."""
    out = []
    for s in sentences:
        if out and rng.random() < rate:
            prev = out[-1]
            n = len(prev.words())
            root = next(k for k, w in enumerate(prev.words()) if w.head == 0) + 1
            for w in s.words():
                w.head = root if w.head == 0 else w.head + n
            prev.tokens = prev.tokens + s.tokens
        else:
            out.append(s)
    return out


def spacy_tokens(sentences, rng, tokenizer: Callable = None):
    """Each sentence's ``# text`` (or its tokens) retokenized by spaCy's English tokenizer; a token
    with a gold token's span keeps that token's first word, others get random annotation."""
    if tokenizer is None:
        import spacy

        tokenizer = spacy.blank("en").tokenizer
    out = []
    for s in sentences:
        text = next((c.split("=", 1)[1].strip() for c in s.comments if c.startswith("# text")), None)
        surface = "".join(t.form + (" " if t.space_after else "") for t in s.tokens)
        if text is None or _strip(text) != _strip(surface):
            text = surface
        gold_at = {}  # (start, end) in non-space characters -> first word's 1-based id
        pos, wid = 0, 0
        for t in s.tokens:
            length = len(_strip(t.form))
            gold_at[(pos, pos + length)] = wid + 1
            pos += length
            wid += len(t.words)
        gold_words = s.words()
        doc = tokenizer(text)
        tokens, ids, pos = [], [], 0
        spans = [tok for tok in doc if not tok.text.isspace()]
        for k, tok in enumerate(spans):
            length = len(_strip(tok.text))
            old = gold_at.get((pos, pos + length))
            pos += length
            if old is not None:
                word = replace(gold_words[old - 1], form=tok.text)
            else:
                word = SysWord(tok.text, upos=rng.choice(UPOS), deprel=rng.choice(DEPRELS), head=-1)
            space = bool(tok.whitespace_) or (tok.i + 1 < len(doc) and doc[tok.i + 1].text.isspace())
            tokens.append(SysToken(tok.text, [word], space))
            ids.append(old)
        new_of = {o: k + 1 for k, o in enumerate(ids) if o is not None}
        words = [w for t in tokens for w in t.words]
        for w in words:
            w.head = rng.randrange(0, len(words) + 1) if w.head < 0 else new_of.get(w.head, 0)
        out.append(_fix(SysSentence(tokens, s.comments), rng))
    return out


def _strip(text: str) -> str:
    return "".join(c for c in text if unicodedata.category(c) != "Zs" and not c.isspace())


PERTURBATIONS: Dict[str, Callable] = {
    "merge_tokens": merge_tokens,
    "split_tokens": split_tokens,
    "multiword_changes": multiword_changes,
    "change_annotation": change_annotation,
    "split_sentences": split_sentences,
    "merge_sentences": merge_sentences,
    "spacy_tokens": spacy_tokens,
}


def perturbed(gold_text: str, names: List[str], seed: int) -> str:
    """CoNLL-U text of ``gold_text`` after the named perturbations, in order."""
    rng = random.Random(seed)
    sentences = parse(gold_text)
    for name in names:
        sentences = PERTURBATIONS[name](sentences, rng)
    return write(sentences)
