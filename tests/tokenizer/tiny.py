"""A tiny made-up treebank for the tokenizer's tests: paragraphs, SpaceAfter=No, multiword tokens."""
from pathlib import Path
from typing import List, Tuple

# (text, [(form, words or None, space_after)]) per sentence; "newpar" before a sentence marks a paragraph
SENTENCES: List[Tuple[bool, List[Tuple[str, Tuple[str, ...], bool]]]] = [
    (True, [("Eu", (), True), ("gosto", (), True), ("do", ("de", "o"), True), ("gato", (), False), (".", (), True)]),
    (False, [("Ele", (), True), ("veio", (), True), ("da", ("de", "a"), True), ("casa", (), False), ("!", (), True)]),
    (True, [("Não", (), True), ("sei", (), False), (",", (), True), ("Dr", (), False), (".", (), True), ("Silva", (), False), (".", (), True)]),
    (False, [("Vamos", (), True), ("ao", ("a", "o"), True), ("rio", (), False), ("?", (), True)]),
    (True, [("Do", ("De", "o"), True), ("alto", (), True), ("vê-se", (), True), ("tudo", (), False), (".", (), True)]),
    (False, [("O", (), True), ("preço", (), True), ("é", (), True), ("10", (), False), ("%", (), False), (".", (), True)]),
]


def conllu(repeat: int = 1) -> str:
    """The treebank as CoNLL-U, its sentences ``repeat`` times (each a new document)."""
    blocks = []
    n = 0
    for r in range(repeat):
        for k, (newpar, tokens) in enumerate(SENTENCES):
            n += 1
            lines = []
            if k == 0:
                lines.append(f"# newdoc id = d{r}")
            if newpar:
                lines.append("# newpar")
            lines.append(f"# sent_id = s{n}")
            text = "".join(form + (" " if space else "") for form, _, space in tokens).rstrip()
            lines.append(f"# text = {text}")
            i = 1
            for form, words, space in tokens:
                misc = "_" if space else "SpaceAfter=No"
                if words:
                    lines.append(f"{i}-{i + len(words) - 1}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
                    for w in words:
                        lines.append(f"{i}\t{w}\t_\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t_")
                        i += 1
                else:
                    lines.append(f"{i}\t{form}\t_\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t{misc}")
                    i += 1
            blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks) + "\n"


def write(path: Path, repeat: int = 1) -> Path:
    path.write_text(conllu(repeat), encoding="utf8")
    return path
