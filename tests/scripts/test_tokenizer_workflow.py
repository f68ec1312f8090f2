"""The workflow's UD tokenizer steps on a tiny made-up Portuguese treebank (multiword tokens
`do` = `de o`): train-tokenizer as project.yml runs it, the shipped pipeline that
scripts/use_tokenizer.py saves (UDTokenizer as nlp.tokenizer, multiword tokens as range lines),
evaluate_raw.py scoring both tokenizers, and the reports' rows for both."""
import contextlib
import json
import os
import re
import shlex
import sys
from pathlib import Path
from typing import List

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from weasel.util.config import load_project_config

from spacy_hcparse.cli import main as cli_main
from spacy_hcparse.evaluation.conll18 import read_treebank
from spacy_hcparse.names import MULTIWORD_TOKENS
from spacy_hcparse.tokenizer import UDTokenizer
from spacy_hcparse.tokenizer.train import TrainSettings, train_tokenizer
from tests.tokenizer.tiny import SENTENCES, write
from tests.ud_valid import ud_validator, validator_report

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import evaluate_raw  # noqa: E402
import report  # noqa: E402
import run_treebanks  # noqa: E402
import use_tokenizer  # noqa: E402

RUN = "UD_Tiny"
TEXT = "Eu gosto do gato. Do alto vê-se tudo."
TINY_PARSER = {"tok2vec": {"width": 16, "depth": 1, "embed_size": 200}, "arc_scorer": {"width": 16},
               "label_scorer": {"width": 8}, "sibling_scorer": {"rank": 4}, "grand_scorer": {"rank": 4}}


def command(name: str, **overrides) -> dict:
    config = load_project_config(ROOT, overrides={f"vars.{k}": v for k, v in overrides.items()})
    return next(c for c in config["commands"] if c["name"] == name)


@contextlib.contextmanager
def in_dir(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_script(line: str, cwd: Path) -> None:
    """A project.yml script line (``python scripts/NAME.py ...`` or ``python -m spacy_hcparse ...``)
    run in this process from ``cwd``, as the workflow runs it from the project directory."""
    args = shlex.split(line)
    assert args[0] == "python"
    with in_dir(cwd):
        if args[1] == "-m":
            assert args[2] == "spacy_hcparse" and cli_main(args[3:]) == 0
            return
        module = {"scripts/use_tokenizer.py": use_tokenizer, "scripts/evaluate_raw.py": evaluate_raw}[args[1]]
        call_main(module, args[2:])


def call_main(module, args: List[str]) -> None:
    old = sys.argv
    sys.argv = [module.__file__] + args
    try:
        module.main()
    finally:
        sys.argv = old


def gold_examples(nlp):
    """One Example per tiny sentence: its syntactic words, every word attached to the first."""
    examples = []
    for _, tokens in SENTENCES:
        words = [w for form, split, _ in tokens for w in (split or (form,))]
        heads = [0] * len(words)
        deps = ["ROOT"] + ["dep"] * (len(words) - 1)
        examples.append(Example(nlp.make_doc(" ".join(words)), Doc(nlp.vocab, words=words, heads=heads, deps=deps)))
    return examples


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A run directory as the workflow leaves it: corpus/RUN (tiny CoNLL-U, data.json),
    training/RUN/tokenizer (trained), hc_parser (an untrained tiny parser), spacy_parser (a stand-in:
    spaCy's tokenizer and a sentencizer), and hc_parser_ud from scripts/use_tokenizer.py."""
    root = tmp_path_factory.mktemp("tokwf")
    corpus, training = root / "corpus" / RUN, root / "training" / RUN
    corpus.mkdir(parents=True)
    for split in ("train", "dev", "test"):
        write(corpus / f"{split}.conllu", repeat=4)
    (corpus / "data.json").write_text(json.dumps({
        "treebank": RUN, "source": "mirror", "train_on": "train", "eval_splits": ["dev", "test"],
        "counts": {s: {"sentences": 24, "words": 0} for s in ("train", "dev", "test")}}))
    # The tokenizer, trained until it knows the tiny treebank (the CLI's steps are tested below).
    bank = read_treebank(corpus / "train.conllu")
    tokenizer = UDTokenizer(spacy.blank("pt").vocab, width=16, dilations=[1, 2], embed_rows=200)
    train_tokenizer(tokenizer, bank, bank, TrainSettings(max_epochs=40, batch_pieces=200, eval_every=1000,
                                                         patience=100, learn_rate=0.01))
    (training / "tokenizer").mkdir(parents=True)
    tokenizer.to_disk(training / "tokenizer" / "tokenizer")
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("pt")
    nlp.add_pipe("hc_parser", config={"model": TINY_PARSER})
    examples = gold_examples(nlp)
    nlp.initialize(lambda: examples)
    (training / "hc_parser").mkdir()
    nlp.to_disk(training / "hc_parser" / "model-best")
    peer = spacy.blank("pt")
    peer.add_pipe("sentencizer")
    (training / "spacy_parser").mkdir()
    peer.to_disk(training / "spacy_parser" / "model-best")
    run_script(command("assemble-ud-parser", run=RUN)["script"][0], root)
    return root


def test_train_tokenizer_command_trains_on_the_runs_text(tmp_path):
    """project.yml's train-tokenizer, as the smoke profile runs it, writes a trained tokenizer."""
    corpus = tmp_path / "corpus" / RUN
    corpus.mkdir(parents=True)
    write(corpus / "train.conllu", repeat=2)
    write(corpus / "dev.conllu")
    cmd = command("train-tokenizer", run=RUN, lang="pt", tokenizer_epochs=run_treebanks.SMOKE["tokenizer_epochs"])
    assert cmd["outputs"][0] == f"training/{RUN}/tokenizer/tokenizer"
    run_script(cmd["script"][0], tmp_path)
    loaded = UDTokenizer(spacy.blank("pt").vocab).from_disk(tmp_path / cmd["outputs"][0])
    assert loaded.trained and len(loaded.lexicon) > 0  # `do` -> `de o` learned from the range lines
    scores = json.loads((tmp_path / cmd["outputs"][1]).read_text())
    assert scores["train"].endswith("train.conllu") and scores["dev"].endswith("dev.conllu")
    assert scores["settings"]["max_epochs"] == run_treebanks.SMOKE["tokenizer_epochs"]


def test_max_epochs_zero_is_the_default(tmp_path):
    write(tmp_path / "t.conllu")
    out = tmp_path / "tok"
    assert cli_main(["train-tokenizer", str(tmp_path / "t.conllu"), str(tmp_path / "t.conllu"), str(out),
                     "--max-epochs", "0", "--width", "8", "--dilations", "1", "--embed-rows", "50"]) == 0
    assert json.loads((out / "scores.json").read_text())["settings"]["max_epochs"] == TrainSettings().max_epochs


def test_shipped_pipeline_loads_with_the_ud_tokenizer(project):
    shipped = project / "training" / RUN / "hc_parser_ud" / "model-best"
    nlp = spacy.load(shipped)
    assert isinstance(nlp.tokenizer, UDTokenizer) and nlp.tokenizer.trained
    assert nlp.config["nlp"]["tokenizer"]["@tokenizers"] == "spacy_hcparse.UDTokenizer.v1"
    assert nlp.pipe_names == ["hc_parser"]
    doc = nlp(TEXT)
    assert [t.text for t in doc][:5] == ["Eu", "gosto", "de", "o", "gato"]
    assert doc._.get(MULTIWORD_TOKENS) == [(2, 4, "do"), (6, 8, "Do")]
    assert doc.has_annotation("DEP")
    # hc_parser segments itself, so the shipped tokenizer leaves sentence starts to it
    assert nlp.tokenizer.cfg["set_sent_starts"] is False and not nlp.tokenizer(TEXT).has_annotation("SENT_START")
    assert nlp.meta["hcparse_tokenizer"]["file"].endswith("tokenizer/tokenizer")


def test_shipped_pipeline_writes_range_lines(project, tmp_path):
    text = tmp_path / "in.txt"
    text.write_text(TEXT + "\n")
    out = tmp_path / "out.conllu"
    shipped = project / "training" / RUN / "hc_parser_ud" / "model-best"
    assert cli_main(["parse", str(shipped), str(text), "--output", str(out)]) == 0
    lines = out.read_text().splitlines()
    ranges = [line.split("\t")[:2] for line in lines if re.match(r"\d+-\d+\t", line)]
    assert [form for _, form in ranges] == ["do", "Do"]  # each inside one sentence (the parser's)
    for span, _ in ranges:
        start = span.split("-")[0]
        assert any(line.startswith(f"{start}\t{word}\t") for line in lines for word in ("de", "De"))
    assert len(read_treebank(out).words) == 12  # the CoNLL 2018 reader takes the range lines


@pytest.mark.slow
def test_range_lines_pass_uds_validator(project, tmp_path):
    """UD's own validate.py (level 2) accepts the shipped pipeline's output from raw text, whose
    multiword tokens are range lines. The tiny pipeline has no tagger, so it writes UPOS ``_``
    (nothing made up), which UD requires: that one test of the validator is left out."""
    validator = ud_validator()
    if validator is None:
        pytest.skip("UD's validate.py is not available: set HCPARSE_UD_TOOLS to a checkout of "
                    "UniversalDependencies/tools (no network to clone it)")
    text = tmp_path / "in.txt"
    text.write_text(TEXT + "\n\nVamos ao rio? O preço é 10%.\n")
    out = tmp_path / "out.conllu"
    shipped = project / "training" / RUN / "hc_parser_ud" / "model-best"
    assert cli_main(["parse", str(shipped), str(text), "--output", str(out)]) == 0
    assert re.search(r"^\d+-\d+\tdo\t", out.read_text(), flags=re.M)
    report = validator_report(validator, out, lang="pt", exclude=["unknown-upos"])
    assert report.endswith("*** PASSED ***"), report


def test_use_tokenizer_refuses_a_missing_tokenizer(project, tmp_path):
    with pytest.raises(FileNotFoundError):
        call_main(use_tokenizer, [str(project / "training" / RUN / "hc_parser" / "model-best"), str(tmp_path / "nothing"),
                                  str(tmp_path / "out")])
    assert not (tmp_path / "out" / "config.cfg").exists()


@pytest.fixture(scope="module")
def raw_metrics(project):
    line = command("evaluate-raw-parsers", run=RUN, raw_group=3, repeats=1)["script"][0]
    run_script(line, project)
    run_script(line + " --flat", project)
    metrics = project / "metrics" / RUN
    return json.loads((metrics / "raw_text.json").read_text()), json.loads((metrics / "raw_text_flat.json").read_text())


def test_evaluate_raw_scores_both_tokenizers(raw_metrics, project):
    raw, flat = raw_metrics
    assert list(raw["pipelines"]) == ["hc_parser", "hc_parser_ud", "spacy_parser", "spacy_parser_ud"]
    assert set(flat["pipelines"]) == set(raw["pipelines"]) and flat["paragraphs"] == "space"
    kinds = {name: entry["tokenizer"] for name, entry in raw["pipelines"].items()}
    assert kinds == {"hc_parser": "spaCy rules", "hc_parser_ud": "UD", "spacy_parser": "spaCy rules",
                     "spacy_parser_ud": "UD"}
    assert raw["tokenizer"].endswith("tokenizer/tokenizer") and raw["peer"] == "spacy_parser"
    for name in ("hc_parser_ud", "spacy_parser_ud"):
        words = raw["pipelines"][name]["splits"]["test"]["scores"]["Words"]["f1"]
        rules = raw["pipelines"][name[:-3]]["splits"]["test"]["scores"]["Words"]["f1"]
        assert words == 1.0 > rules  # spaCy's Portuguese rules keep `do` whole; the UD tokenizer splits it
    training = project / "training" / RUN
    assert (training / "spacy_parser" / "output" / "test.raw_ud.conllu").exists()  # swapped in: its own file
    assert (training / "hc_parser_ud" / "output" / "test.raw.conllu").exists()  # the shipped pipeline, as saved
    assert (training / "spacy_parser" / "output" / "test.raw_ud_flat.conllu").exists()
    assert raw["pipelines"]["spacy_parser"]["splits"]["test"]["ratio_to_spacy"] == pytest.approx(1.0)


def test_report_shows_raw_text_for_both_tokenizers(raw_metrics):
    raw, flat = raw_metrics
    gold = {"parser": "hc_parser", "splits": {s: {
        "ud_uas": 0.5, "ud_las": 0.25, "dep_uas": 0.5, "dep_las": 0.25, "exact_las": 0.0, "words_per_sec": 100.0,
        "nonprojective": {"precision": None, "recall": None, "gold_arcs": 0}} for s in ("dev", "test")}}
    text = report.render(RUN, [gold], {}, None, "x.png", raw, flat)
    section = text[text.index("## Raw text by tokenizer (test)"):]
    rows = {line.split(" | ")[1]: line.split(" | ") for line in section.splitlines() if line.startswith(f"| {RUN} |")}
    assert set(rows) == {"hc_parser", "hc_parser_ud", "spacy_parser", "spacy_parser_ud"}
    assert rows["hc_parser_ud"][2] == "UD" and rows["hc_parser"][2] == "spaCy rules"
    assert rows["hc_parser_ud"][3] == rows["hc_parser"][3] == "25.00"  # the parser's LAS from gold words beside
    assert rows["spacy_parser"][3] == "n/a"
    assert rows["spacy_parser_ud"][4] == "100.00"  # Words
    flat_words = flat["pipelines"]["hc_parser"]["splits"]["test"]["scores"]["Words"]["f1"]
    assert rows["hc_parser"][7] == f"{100 * flat_words:.2f}"  # Words without line breaks
    # Metrics from before the tokenizer step (no "tokenizer" key) keep their report as it was.
    old = {k: v for k, v in raw.items() if k != "tokenizer"}
    assert "Raw text by tokenizer" not in report.render(RUN, [gold], {}, None, "x.png", old, flat)


def test_multilingual_summary_has_the_raw_text_rows(raw_metrics, project, monkeypatch):
    monkeypatch.chdir(project)
    metrics = project / "metrics" / RUN
    (metrics / "hc_parser.json").write_text(json.dumps({"parser": "hc_parser", "splits": {"test": {
        "ud_uas": 0.5, "ud_las": 0.25, "words_per_sec": 100.0}}}))
    path = project / "reports" / "multilingual.md"
    run_treebanks.write_summary([RUN], path, "smoke", run_treebanks.SMOKE)
    text = path.read_text()
    assert "## Raw text: spaCy's tokenizer and the UD tokenizer" in text
    rows = [line for line in text.splitlines() if line.startswith(f"| {RUN} | hc_parser")]
    assert [r.split(" | ")[1:4] for r in rows] == [["hc_parser", "spaCy rules", "25.00"], ["hc_parser_ud", "UD", "25.00"]]


def test_shipped_meta_has_the_dev_scores_of_the_kept_hint_weight(tmp_path):
    """meta.json's hcparse_tokenizer.dev_scores are the scores of the tokenizer as shipped (the hint
    weight training chose), not the best checkpoint's with the model alone."""
    best = {"Tokens": 0.985, "Words": 0.985, "Sentences": 0.70, "Sentences_flat": 0.70}
    rows = [{"hint_weight": w, **best, "Words": words, "score": 1.0} for w, words in ((0.0, 0.985), (8.0, 0.998))]
    (tmp_path / "scores.json").write_text(json.dumps({"train": "t", "dev": "d", "cfg": {"hint_weight": 8.0},
                                                      "best": {"scores": best}, "hint_weights": rows}))
    meta = use_tokenizer.tokenizer_meta(tmp_path / "tokenizer")
    assert meta["dev_scores"]["hint_weight"] == 8.0 and meta["dev_scores"]["Words"] == 0.998
    assert "score" not in meta["dev_scores"]
    (tmp_path / "scores.json").write_text(json.dumps({"cfg": {"hint_weight": 0.0}, "best": {"scores": best}}))
    assert use_tokenizer.tokenizer_meta(tmp_path / "tokenizer")["dev_scores"] == best  # files from before the choice
