"""Multiword tokens: the syntactic words of a surface token, learned from a treebank.

``MultiwordLexicon.expand(form)`` gives the words of a surface token the model marked as
multiword:

1. the form as seen in training (its most frequent expansion);
2. the lowercased form as seen in training, with the case of ``form`` put back (all upper: every
   word upper; a capital first letter: the first word's first letter);
3. a suffix rule: for every training expansion, the part of the form after its common prefix with
   the first word (``do`` = ``de o``: ``o`` -> first word ends ``e``, then ``o``; ``fazê-lo`` =
   ``fazer o``: ``ê-lo`` -> ``er``, then ``o``); the longest rule seen at least
   ``MIN_RULE_COUNT`` times whose tail ends the form applies;
4. None: the form stays one word.

Where the words spell the form exactly (``don't`` = ``do n't``) the form is cut at the same
offsets, so the words keep the form's own characters and case.
"""
from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

Words = Tuple[str, ...]
MIN_RULE_COUNT = 2


class MultiwordLexicon:
    """Surface form -> syntactic words (see module docstring)."""

    def __init__(self, forms: Optional[Dict[str, Words]] = None, lower: Optional[Dict[str, Words]] = None,
                 rules: Optional[Dict[str, Tuple[str, Words]]] = None):
        self.forms: Dict[str, Words] = dict(forms or {})
        self.lower: Dict[str, Words] = dict(lower or {})
        self.rules: Dict[str, Tuple[str, Words]] = dict(rules or {})
        self._longest_rule = max((len(k) for k in self.rules), default=0)

    @classmethod
    def from_pairs(cls, pairs: Iterable[Tuple[str, Sequence[str]]]) -> "MultiwordLexicon":
        """The lexicon of (surface form, words) pairs, e.g. every multiword token of a treebank."""
        forms: Dict[str, Counter] = defaultdict(Counter)
        lower: Dict[str, Counter] = defaultdict(Counter)
        rules: Dict[str, Counter] = defaultdict(Counter)
        for form, words in pairs:
            words = tuple(words)
            if len(words) < 2 or not form or not all(words):
                continue
            forms[form][words] += 1
            low_form, low_words = form.lower(), tuple(w.lower() for w in words)
            lower[low_form][low_words] += 1
            rule = _rule(low_form, low_words)
            if rule is not None:
                rules[rule[0]][rule[1]] += 1
        return cls(
            {f: c.most_common(1)[0][0] for f, c in forms.items()},
            {f: c.most_common(1)[0][0] for f, c in lower.items()},
            {t: (c.most_common(1)[0][0][0], c.most_common(1)[0][0][1]) for t, c in rules.items()
             if sum(c.values()) >= MIN_RULE_COUNT},
        )

    def __len__(self) -> int:
        return len(self.forms)

    def expand(self, form: str) -> Optional[Words]:
        """The words of ``form``, or None where no entry or rule applies (see module docstring)."""
        if form in self.forms:
            return self.forms[form]
        low = form.lower()
        words = self.lower.get(low)
        if words is None:
            words = self._by_rule(low)
            if words is None:
                return None
        return _with_case(form, words)

    def _by_rule(self, low: str) -> Optional[Words]:
        for size in range(min(self._longest_rule, len(low) - 1), 0, -1):
            rule = self.rules.get(low[-size:])
            if rule is not None:
                first_tail, rest = rule
                return (low[:-size] + first_tail,) + rest
        return None

    def to_dict(self) -> Dict:
        return {"forms": {f: list(w) for f, w in self.forms.items()},
                "lower": {f: list(w) for f, w in self.lower.items()},
                "rules": {t: [first, list(rest)] for t, (first, rest) in self.rules.items()}}

    @classmethod
    def from_dict(cls, data: Dict) -> "MultiwordLexicon":
        """The lexicon ``to_dict`` wrote; ValueError for anything else."""
        try:
            forms = {str(f): _words(w) for f, w in data["forms"].items()}
            lower = {str(f): _words(w) for f, w in data["lower"].items()}
            rules = {str(t): (str(r[0]), _words(r[1], 1)) for t, r in data["rules"].items()}
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as err:
            raise ValueError(f"not a multiword-token lexicon: {err!r}") from None
        return cls(forms, lower, rules)


def _words(value, least: int = 2) -> Words:
    if not isinstance(value, (list, tuple)) or len(value) < least or not all(isinstance(w, str) and w for w in value):
        raise ValueError(f"expected a list of at least {least} words, got {value!r}")
    return tuple(value)


def _rule(form: str, words: Words) -> Optional[Tuple[str, Tuple[str, Words]]]:
    """The suffix rule of one expansion: (form tail, (first word's tail, other words))."""
    first = words[0]
    common = 0
    while common < min(len(form), len(first)) and form[common] == first[common]:
        common += 1
    if common == 0 or common == len(form):
        return None
    return form[common:], (first[common:], tuple(words[1:]))


def _with_case(form: str, words: Words) -> Words:
    """``words`` (as learned) spelled with the characters and case of ``form``."""
    if "".join(words).lower() == form.lower() and len("".join(words)) == len(form):
        out: List[str] = []
        at = 0
        for w in words:
            out.append(form[at:at + len(w)])
            at += len(w)
        return tuple(out)
    if len(form) > 1 and form.isupper():
        return tuple(w.upper() for w in words)
    if form[:1].isupper() and words[0][:1].islower():
        return (words[0][:1].upper() + words[0][1:],) + tuple(words[1:])
    return tuple(words)
