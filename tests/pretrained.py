"""Tiny pretrained inputs that tests build themselves (nothing is downloaded): a static vectors
table made with ``spacy init vectors``, and a random 2-layer BERT saved as a Hugging Face folder."""
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterable

import numpy as np


def tiny_vectors(path: Path, words: Iterable[str], width: int = 8) -> str:
    """A pipeline directory holding only a vectors table (one random row per word), as
    ``spacy init vectors`` writes it: what ``[initialize] vectors`` / ``--paths.vectors`` names."""
    path.mkdir(parents=True)
    rng = np.random.default_rng(0)
    lines = [f"{word} " + " ".join(f"{x:.4f}" for x in rng.normal(size=width)) for word in sorted(set(words))]
    source = path / "vectors.txt"
    source.write_text(f"{len(lines)} {width}\n" + "\n".join(lines) + "\n", encoding="utf8")
    subprocess.run([sys.executable, "-m", "spacy", "init", "vectors", "en", str(source), str(path / "model")],
                   check=True, capture_output=True)
    return str(path / "model")


def tiny_bert(path: Path, words: Iterable[str], layers: int = 2) -> str:
    """A ``layers``-layer BERT (hidden 32, 2 heads) with random weights and a word-level vocab of
    ``words`` (and their characters), saved as a Hugging Face model directory."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import torch
    import transformers

    words = sorted({w.lower() for w in words})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(set(words) | set("".join(words)))
    path.mkdir(parents=True)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf8")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=layers,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=160)
    transformers.BertModel(config).save_pretrained(str(path))
    tokenizer.save_pretrained(str(path))
    return str(path)
