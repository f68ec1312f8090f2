"""Evaluate every trained parser of a run on gold tokens and sentences; one JSON per parser.

    python scripts/evaluate.py corpus/RUN training/RUN metrics/RUN [--repeats 3]

All parsers get the same input: one Doc per gold sentence, gold words, the sentence start preset.
Per parser and split (dev and test, or test only when dev was the training set):
``dep_uas``/``dep_las`` (spaCy's Scorer, punctuation dropped), ``ud_uas``/``ud_las`` and the other
UD metrics of ``spacy_hcparse.evaluation`` from the CoNLL-U the parser wrote
(``training/RUN/<parser>/output/<split>.conllu``), and words/sec (median of ``--repeats`` runs of
``nlp.pipe``). For ``hc_parser`` also the search statistics: per-decoder scores with the same
weights, the dual decoder's certificate rate, the share of certified sentences where hill climbing
reaches the certified optimum, and the restarts hill climbing used.
Writes ``metrics/RUN/<parser>.json`` (a parser without a trained model gets ``"skipped"``).
"""
import argparse
import json
import platform
import statistics
from pathlib import Path
from typing import Dict, List

import numpy as np
import spacy
from spacy.pipeline.dep_parser import parser_score
from spacy.training import Example
from wasabi import msg

from spacy_hcparse.conllu import Sentence, read_conllu
from spacy_hcparse.evaluation import gold_doc, input_doc, parse_timed, score_conllu, sentence_conllu

PARSERS = ("hc_parser", "hc_transition_parser", "spacy_parser")
DECODERS = ("hill_climb", "dual", "mst", "eisner")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("training", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--parsers", default=",".join(PARSERS))
    args = parser.parse_args()
    data = json.loads((args.corpus / "data.json").read_text())
    args.output.mkdir(parents=True, exist_ok=True)
    for name in args.parsers.split(","):
        result = evaluate_parser(name, args.training / name, args.corpus, data, args.repeats, args.batch_size)
        path = args.output / f"{name}.json"
        path.write_text(json.dumps(result, indent=2) + "\n")
        msg.good(f"wrote {path}")


def evaluate_parser(name: str, train_dir: Path, corpus: Path, data: Dict, repeats: int, batch_size: int) -> Dict:
    result = {"parser": name, "treebank": data["treebank"], "data_source": data["source"], "train_on": data["train_on"]}
    model = train_dir / "model-best"
    if not model.exists():
        marker = train_dir / "SKIPPED.txt"
        reason = marker.read_text().strip() if marker.exists() else f"no trained model at {model}"
        msg.warn(f"{name}: skipped ({reason})")
        return {**result, "skipped": reason}
    nlp = spacy.load(model)
    result.update({"model": str(model), "pipeline": nlp.pipe_names, "machine": platform.processor() or platform.machine(),
                   "repeats": repeats, "splits": {}})
    for split in data["eval_splits"]:
        gold_path = corpus / f"{split}.conllu"
        gold = list(read_conllu(gold_path))
        out_dir = train_dir / "output"
        out_dir.mkdir(exist_ok=True)
        msg.info(f"{name} on {split}: {len(gold)} sentences")
        scores, docs = score_run(nlp, gold, gold_path, out_dir / f"{split}.conllu", repeats, batch_size, f"{name}/{split}")
        if name == "hc_parser":
            scores["search"] = search_statistics(nlp, gold, gold_path, out_dir, split, batch_size)
        result["splits"][split] = scores
        msg.text(f"  {split}: dep_uas {_pct(scores['dep_uas'])} dep_las {_pct(scores['dep_las'])} "
                 f"ud_uas {_pct(scores['ud_uas'])} ud_las {_pct(scores['ud_las'])} {scores['words_per_sec']:.0f} words/s")
    return result


def score_run(nlp, gold: List[Sentence], gold_path: Path, system_path: Path, repeats: int, batch_size: int, label: str):
    """Parse ``gold``'s words ``repeats`` times; spaCy and UD scores of the last run, and speed."""
    n_words = sum(len(s.words) for s in gold)
    docs, wps, speeds = parse_timed(nlp, lambda: [input_doc(nlp, s) for s in gold], n_words, repeats, batch_size, label)
    system_path.write_text("".join(sentence_conllu(doc, sent) for doc, sent in zip(docs, gold)), encoding="utf8")
    examples = [Example(doc, gold_doc(nlp, sent)) for doc, sent in zip(docs, gold)]
    dep = parser_score(examples)  # spacy.parser_scorer.v1, what `spacy train` reports: punct dropped
    ud = score_conllu(gold_path, system_path)
    scores = {
        "dep_uas": dep["dep_uas"],
        "dep_las": dep["dep_las"],
        **ud,
        "words_per_sec": wps,
        "words_per_sec_runs": speeds,
        "system_output": str(system_path),
    }
    return scores, docs


def search_statistics(nlp, gold, gold_path: Path, out_dir: Path, split: str, batch_size: int) -> Dict:
    """Per-decoder scores (same weights) and how hill climbing compares with dual decomposition."""
    pipe = nlp.get_pipe("hc_parser")
    default = pipe.cfg["decoder"]
    per_decoder, docs_by = {}, {}
    try:
        for decoder in DECODERS:
            pipe.cfg["decoder"] = decoder
            scores, docs = score_run(nlp, gold, gold_path, out_dir / f"{split}.{decoder}.conllu", 1, batch_size,
                                     f"hc_parser/{split}/{decoder}")
            per_decoder[decoder] = {k: scores[k] for k in ("dep_uas", "dep_las", "ud_uas", "ud_las", "words_per_sec")}
            docs_by[decoder] = docs
    finally:
        pipe.cfg["decoder"] = default
    stats = {"default_decoder": default, "per_decoder": per_decoder}
    stats.update(certificates(docs_by["hill_climb"], docs_by["dual"]))
    stats["hill_climb_restarts"] = restart_statistics(pipe, [input_doc(nlp, s) for s in gold], batch_size)
    return stats


def certificates(docs_hc, docs_dual) -> Dict:
    """Certificate rate of the dual decoder and, on certified sentences, how often hill climbing's
    tree scores as high as the certified optimum (one Doc per gold sentence)."""
    certified = reached = 0
    gaps = []
    for hc, dual in zip(docs_hc, docs_dual):
        if all(s._.hc_certified for s in dual.sents):
            certified += 1
            gap = dual._.hc_parse_score - hc._.hc_parse_score
            gaps.append(gap)
            reached += gap <= 1e-6 * max(1.0, abs(dual._.hc_parse_score))
    n = len(docs_hc)
    return {
        "sentences": n,
        "certificate_rate": certified / n if n else None,
        "hill_climb_reaches_certified_optimum": reached / certified if certified else None,
        "mean_gap_to_certified_optimum": float(np.mean(gaps)) if gaps else None,
    }


def restart_statistics(pipe, docs, batch_size: int) -> Dict:
    """Restarts hill climbing used per sentence (re-decodes with the component's own settings).

    Uses the component's internal scoring and decoding steps, the only place the restart count is
    known; returns ``{"available": False}`` if those internals change.
    """
    from spacy_hcparse import factors

    restarts, capped = [], 0
    try:
        for start in range(0, len(docs), batch_size):
            batch = docs[start : start + batch_size]
            blocks, arcs = pipe.model.predict(batch)
            arcs = [np.asarray(a, dtype=np.float64) for a in arcs]
            masks = [factors.candidate_heads(arc, pipe.cfg["top_k"]) for arc in arcs]
            sibs, grands = pipe._higher_order(blocks, masks, is_train=False)[:2]
            for arc, mask, sib, grand in zip(arcs, masks, sibs, grands):
                result = pipe._decode("hill_climb", factors.pruned_arc(arc, mask), sib, grand)
                restarts.append(result.restarts)
                capped += bool(result.time_capped)
    except (AttributeError, TypeError) as err:
        return {"available": False, "reason": str(err)}
    if not restarts:
        return {"available": True, "spans": 0}
    return {
        "available": True,
        "spans": len(restarts),
        "mean": float(np.mean(restarts)),
        "median": float(statistics.median(restarts)),
        "max": int(max(restarts)),
        "max_restarts_setting": pipe.cfg["hill_climb_options"].get("max_restarts"),
        "time_capped_share": capped / len(restarts),
    }


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


if __name__ == "__main__":
    main()
