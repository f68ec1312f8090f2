"""The measurement harness: the one place parsers are run, timed and scored on gold words.

The workflow (``scripts/evaluate.py``), the benchmarks (``benchmarks/parser_vs_spacy.py``) and
the README's tables all call these functions, so each figure has one definition:

- input: one Doc per gold sentence, gold words, its sentence start preset (every parser sees the
  same input);
- ``dep_uas``/``dep_las``: spaCy's parser scorer (what ``spacy train`` reports: punctuation
  dropped); ``ud_uas``/``ud_las`` and the rest of ``evaluation.ud`` from the CoNLL-U written
  (punctuation counted, label subtypes dropped);
- words/sec: ``nlp.pipe`` in this process, median of ``repeats`` runs on fresh Docs; to compare
  pipelines, ``interleaved_speeds`` runs them in turns and ``speed_ratio`` takes the median of
  the per-round ratios;
- search statistics of ``hc_parser`` (``search_statistics``), from the decoders' own results
  (``GraphParser.predict``), over every span, never a subset.

Decoders are compared by loading the same pipeline with another ``decoder`` in its config (as a
user would), not by editing a loaded component.
"""
import statistics
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import spacy
from spacy.language import Language
from spacy.pipeline.dep_parser import parser_score
from spacy.tokens import Doc
from spacy.training import Example

from ..conllu import read_conllu
from .conll18 import METRICS, evaluate, read_treebank
from .raw_text import tokenized
from .system_output import REPAIRS, write_conllu
from .ud import gold_doc, input_doc, score_conllu, sentence_conllu

PathLike = Union[str, Path]
# Registered names of the decoders a comparison runs by default.
DECODERS: Dict[str, Dict] = {
    "hill_climb": {"@misc": "spacy_hcparse.HillClimb.v2"},
    "dual": {"@misc": "spacy_hcparse.Dual.v1"},
    "mst": {"@misc": "spacy_hcparse.MST.v1"},
    "eisner": {"@misc": "spacy_hcparse.Eisner.v1"},
    "certified": {"@misc": "spacy_hcparse.Certified.v1"},
}


def parse_timed(nlp: Language, make_inputs, n_words: int, repeats: int = 3, batch_size: int = 256,
                progress: Optional[str] = None) -> Tuple[List[Doc], float, List[float]]:
    """Parse fresh inputs ``repeats`` times; (docs of the last run, median words/sec, all speeds).

    ``make_inputs()`` returns new unparsed Docs each time, so no run sees another's annotation.
    """
    speeds: List[float] = []
    docs: List[Doc] = []
    for r in range(max(1, repeats)):
        inputs = make_inputs()
        stream = nlp.pipe(tokenized(nlp, inputs, batch_size), batch_size=batch_size)
        if progress:
            stream = _progress(stream, len(inputs), f"{progress} run {r + 1}/{repeats}")
        start = time.perf_counter()
        docs = list(stream)
        speeds.append(n_words / max(time.perf_counter() - start, 1e-9))
    return docs, statistics.median(speeds), speeds


def interleaved_speeds(pipelines: Mapping[str, Language], gold_path: PathLike, *, repeats: int = 5,
                       batch_size: int = 256, limit: int = 0) -> Dict[str, List[float]]:
    """Words/sec of each pipeline on the gold file's words (one Doc per sentence, as
    ``evaluate_gold``), the pipelines taking turns run by run (A B C, A B C, ...), so that a slow
    spell of a shared machine falls on all of them instead of on whichever ran then. Per pipeline,
    its ``repeats`` speeds in round order: ``speed_ratio`` pairs them round by round."""
    gold = list(read_conllu(gold_path))[: limit or None]
    n_words = sum(len(s.words) for s in gold)
    return _take_turns(pipelines, lambda nlp, n=None: [input_doc(nlp, s) for s in gold[:n]], n_words, repeats,
                       batch_size)


def interleaved_raw_speeds(pipelines: Mapping[str, Language], documents, *, repeats: int = 5,
                           batch_size: int = 64) -> Dict[str, List[float]]:
    """``interleaved_speeds`` on raw text: gold words per second of ``nlp.pipe`` on the texts of
    ``documents`` (``raw_text.RawDocument``s, as ``evaluate_raw``), the pipelines taking turns."""
    texts = [d.text for d in documents]
    n_words = sum(d.n_words for d in documents)
    return _take_turns(pipelines, lambda nlp, n=None: texts[:n], n_words, repeats, batch_size)


def _take_turns(pipelines: Mapping[str, Language], make_inputs: Callable[..., list], n_words: int, repeats: int,
                batch_size: int) -> Dict[str, List[float]]:
    """One untimed warm-up each (numba's cache loads, first allocations), then ``repeats`` rounds
    in which every pipeline parses ``make_inputs(nlp)`` once."""
    speeds: Dict[str, List[float]] = {name: [] for name in pipelines}
    for nlp in pipelines.values():
        list(nlp.pipe(make_inputs(nlp, 50), batch_size=batch_size))
    for _ in range(max(1, repeats)):
        for name, nlp in pipelines.items():
            speeds[name].append(parse_timed(nlp, lambda: make_inputs(nlp), n_words, 1, batch_size)[1])
    return speeds


def speed_ratio(speeds: Sequence[float], peer: Sequence[float]) -> float:
    """The median over rounds of ``speeds[r] / peer[r]`` (runs of ``interleaved_speeds`` or
    ``interleaved_raw_speeds``)."""
    return float(statistics.median(a / b for a, b in zip(speeds, peer)))


def evaluate_gold(nlp: Language, gold_path: PathLike, system_path: PathLike, *, repeats: int = 3,
                  batch_size: int = 256, limit: int = 0, progress: Optional[str] = None) -> Tuple[Dict, List[Doc]]:
    """Parse the gold file's words ``repeats`` times, write the last run's parses to
    ``system_path`` (CoNLL-U, the gold file's other columns kept) and score them: (scores, docs)."""
    gold = list(read_conllu(gold_path))[: limit or None]
    n_words = sum(len(s.words) for s in gold)
    docs, wps, speeds = parse_timed(nlp, lambda: [input_doc(nlp, s) for s in gold], n_words, repeats,
                                    batch_size, progress)
    system_path = Path(system_path)
    system_path.write_text("".join(sentence_conllu(doc, sent) for doc, sent in zip(docs, gold)), encoding="utf8")
    dep = parser_score([Example(doc, gold_doc(nlp, sent)) for doc, sent in zip(docs, gold)])
    if limit:  # score the subset: the UD scorer compares whole files
        subset = system_path.with_suffix(".gold.conllu")
        subset.write_text("".join(sentence_conllu(gold_doc(nlp, s), s) for s in gold), encoding="utf8")
        gold_path = subset
    scores = {"dep_uas": dep["dep_uas"], "dep_las": dep["dep_las"], **score_conllu(gold_path, system_path),
              "words_per_sec": wps, "words_per_sec_runs": speeds, "system_output": str(system_path)}
    return scores, docs


def span_results(nlp: Language, docs: Iterable[Doc], batch_size: int = 256) -> list:
    """The decoder's result (``graph.decoding.DecodeResult``) for every span ``hc_parser`` parses in
    ``docs`` (fresh, unparsed Docs), in order: what the component's ``predict`` returns."""
    pipe = nlp.get_pipe("hc_parser")
    docs = list(docs)
    out = []
    for start in range(0, len(docs), batch_size):
        for doc_parses in pipe.predict(docs[start: start + batch_size]):
            out.extend(parse.result for parse in doc_parses.parses)
    return out


def search_statistics(results: Mapping[str, Sequence], full: Sequence[str], tolerance: float = 1e-6) -> Dict:
    """What the searches achieved on the same spans, one definition for every report.

    ``results``: decoder name -> its ``DecodeResult`` per span (all spans, same order); ``full``:
    the names of the decoders that search the whole objective (arc + sibling + grandparent
    factors; the others score trees differently, so their scores are not compared). A span is
    *proven* when one of those certified its tree (its score is then the optimum). Per decoder:
    the share of spans it certified; for the ``full`` decoders, over the proven spans, the share
    where its tree scores the proven optimum (within ``tolerance`` times the score's size) and
    its mean/max gap below it; ``restarts``: mean/median/max of its restarts (hill climbing) or
    iterations (dual); the share of spans its time cap stopped.
    """
    names = list(results)
    n = len(results[names[0]]) if names else 0
    optimum = np.full(n, np.nan)
    for name in full:
        for i, r in enumerate(results[name]):
            if r.certified:
                optimum[i] = r.score
    proven = ~np.isnan(optimum)
    stats: Dict = {"spans": n, "proven_share": float(proven.mean()) if n else None, "decoders": {}}
    for name in names:
        scores = np.array([r.score for r in results[name]], dtype=np.float64)
        if name in full:
            gaps = optimum[proven] - scores[proven]
            exact = gaps <= tolerance * np.maximum(1.0, np.abs(optimum[proven]))
        else:  # scores of another objective: not compared
            gaps = exact = np.zeros(0)
        restarts = [r.restarts for r in results[name]]
        stats["decoders"][name] = {
            "certified_share": float(np.mean([bool(r.certified) for r in results[name]])) if n else None,
            "exact_share_of_proven": float(exact.mean()) if len(gaps) else None,
            "mean_gap_on_proven": float(np.maximum(gaps, 0).mean()) if len(gaps) else None,
            "max_gap_on_proven": float(gaps.max()) if len(gaps) else None,
            "restarts": {"mean": float(np.mean(restarts)), "median": float(statistics.median(restarts)),
                         "max": int(max(restarts))} if restarts else None,
            "time_capped_share": float(np.mean([bool(r.time_capped) for r in results[name]])) if n else None,
        }
    return stats


def compare_decoders(model: PathLike, gold_path: PathLike, out_dir: PathLike, *,
                     decoders: Optional[Mapping[str, Dict]] = None, batch_size: int = 256, limit: int = 0,
                     progress: bool = False) -> Dict:
    """Every decoder with the same ``hc_parser`` weights: each loads ``model`` with that decoder
    in its config, parses the gold words once (scores and words/sec), and its span results feed
    ``search_statistics``."""
    decoders = DECODERS if decoders is None else decoders
    gold = list(read_conllu(gold_path))[: limit or None]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    per_decoder, results, full = {}, {}, []
    for name, config in decoders.items():
        nlp = spacy.load(model, config={"components": {"hc_parser": {"decoder": config}}})
        if "grand" in nlp.get_pipe("hc_parser").decoder.factors:  # the searches: they read every factor
            full.append(name)
        scores, _ = evaluate_gold(nlp, gold_path, out_dir / f"{Path(gold_path).stem}.{name}.conllu", repeats=1,
                                  batch_size=batch_size, limit=limit, progress=f"hc_parser/{name}" if progress else None)
        per_decoder[name] = {k: scores[k] for k in ("dep_uas", "dep_las", "ud_uas", "ud_las", "words_per_sec")}
        results[name] = span_results(nlp, (input_doc(nlp, s) for s in gold), batch_size)
    return {"per_decoder": per_decoder, "search": search_statistics(results, full)}


def evaluate_raw(nlp: Language, gold, documents, system_path: PathLike, *, repeats: int = 3,
                 batch_size: int = 64) -> Dict:
    """Parse raw text as a user would and score it with the CoNLL 2018 evaluation.

    ``gold``: the gold ``conll18.Treebank``; ``documents``: its text as ``raw_text.RawDocument``s
    (e.g. ``raw_documents(gold, 10)``: documents of 10 sentences). ``nlp.pipe`` runs on the texts
    (spaCy's tokenizer, the pipeline's sentence boundaries, tags and parse), ``repeats`` timed runs
    after one untimed call (speed: gold words per second, median); the last run's Docs are written
    to ``system_path`` (``system_output.write_conllu``) and scored. Returns every CoNLL 2018
    metric (precision, recall, F1, aligned accuracy), the speeds, and the repairs made to write
    one tree per sentence."""
    texts = [d.text for d in documents]
    n_words = sum(d.n_words for d in documents)
    if texts:
        nlp(texts[0])  # untimed: lazy initialisation, JIT compilation
    speeds, docs = [], []
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        docs = list(nlp.pipe(tokenized(nlp, texts, batch_size), batch_size=batch_size))
        speeds.append(n_words / max(time.perf_counter() - start, 1e-9))
    stats = write_conllu(docs, system_path)
    scores = evaluate(gold, read_treebank(system_path))
    return {"scores": {m: scores[m].as_dict() for m in METRICS}, "words": n_words,
            "words_per_sec": statistics.median(speeds), "words_per_sec_runs": speeds,
            "system_output": str(system_path), "repairs": {k: stats[k] for k in REPAIRS if stats[k]}}


def _progress(stream: Iterable, total: int, desc: str) -> Iterable:
    from tqdm import tqdm

    return tqdm(stream, total=total, desc=desc, unit="sent", leave=False, mininterval=1.0)

