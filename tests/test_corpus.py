"""Parsing a corpus (spacy_hcparse/corpus.py and ``parse --output-dir``): a directory tree of
files, resume after a kill, failing files, parallel runs with the same outputs, the memory bound."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import spacy

from spacy_hcparse.cli import EXIT_SOME_FAILED, main
from spacy_hcparse.conllu import read_conllu
from spacy_hcparse.corpus import FileTask, ParseOptions, parse_corpus, parse_stream, parse_task, plan_files
from tests.treebank import SENTENCES, make_examples

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "sample"
TEXTS = [" ".join(words) for words, _, _ in SENTENCES]


@pytest.fixture(scope="module")
def parser_model(tmp_path_factory):
    """A tiny perceptron hc_transition_parser trained on tests/treebank.py, saved to disk."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("hc_transition_parser", config={"model": {"n_buckets": 2**12}, "label_freq_cutoff": 1})
    examples = make_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(10):
        nlp.update(examples, sgd=optimizer)
    path = tmp_path_factory.mktemp("corpus") / "parser"
    nlp.to_disk(path)
    return path


@pytest.fixture(scope="module")
def sentencizer_model(tmp_path_factory):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    path = tmp_path_factory.mktemp("corpus") / "sentencizer"
    nlp.to_disk(path)
    return path


def make_tree(root: Path, n_lines: int = 12) -> Path:
    """Text files at three depths, a CoNLL-U file, a file the pattern leaves out, a hidden one."""
    for i, rel in enumerate(["a.txt", "sub/b.txt", "sub/deep/c.txt", "sub/deep/e.txt"]):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [TEXTS[(i + j) % len(TEXTS)] for j in range(n_lines)]
        path.write_text("\n".join(lines[:3]) + "\n\n" + "\n".join(lines[3:]) + "\n")  # a blank line
    (root / "sub" / "d.conllu").write_text((SAMPLE / "sample-ud-dev.conllu").read_text())
    (root / "notes.md").write_text("not a corpus file\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.txt").write_text("hidden\n")
    return root


EXPECTED = ["a.conllu", "sub/b.conllu", "sub/d.conllu", "sub/deep/c.conllu", "sub/deep/e.conllu"]


def outputs(out: Path) -> dict:
    return {str(p.relative_to(out)): p.read_text() for p in sorted(out.rglob("*")) if p.is_file()}


def parse_dir(model, tree, out, *extra):
    return main(["parse", str(model), str(tree), "--output-dir", str(out),
                 "--pattern", "*.txt", "--pattern", "*.conllu", "--quiet", *extra])


def test_plan_files_mirrors_the_tree(tmp_path):
    tree = make_tree(tmp_path / "in")
    out = tree / "parsed"  # inside the input: left out of the search
    (out / "old").mkdir(parents=True)
    (out / "old" / "z.txt").write_text("an earlier output\n")
    tasks = plan_files([tree], out, ["*.txt", "*.conllu"])
    assert [str(t.target.relative_to(out.resolve())) for t in tasks] == EXPECTED
    assert tasks[0].source == tree / "a.txt"
    single = plan_files([tree / "sub" / "b.txt"], tmp_path / "o", output_format="json")
    assert single == [FileTask(tree / "sub" / "b.txt", (tmp_path / "o" / "b.json").resolve())]
    (tree / "a.conllu").write_text("")
    with pytest.raises(ValueError, match="would both write"):
        plan_files([tree], tmp_path / "o", ["*.txt", "*.conllu"])
    with pytest.raises(ValueError, match="inside the output directory"):
        plan_files([tree / "sub"], tree)
    with pytest.raises(ValueError, match="no such file"):
        plan_files([tmp_path / "missing"], tmp_path / "o")


def test_tree_parsed_to_mirrored_paths_then_skipped(parser_model, tmp_path, capsys):
    tree, out = make_tree(tmp_path / "in"), tmp_path / "out"
    assert parse_dir(parser_model, tree, out) == 0
    assert sorted(outputs(out)) == EXPECTED
    summary = capsys.readouterr().err
    assert "files: 5 parsed, 0 skipped (output already there), 0 failed" in summary
    assert "words/sec" in summary
    for rel in EXPECTED:
        sentences = list(read_conllu(out / rel))  # raises unless every sentence is one tree
        assert sentences
    text_sentences = list(read_conllu(out / "a.conllu"))
    assert sum(len(s.words) for s in text_sentences) == sum(len(TEXTS[j % len(TEXTS)].split()) for j in range(12))
    gold = list(read_conllu(SAMPLE / "sample-ud-dev.conllu"))
    parsed = list(read_conllu(out / "sub" / "d.conllu"))
    assert [s.comments for s in parsed] == [s.comments for s in gold]
    assert [[w.form for w in s.words] for s in parsed] == [[w.form for w in s.words] for s in gold]
    before = outputs(out)
    assert parse_dir(parser_model, tree, out) == 0
    assert "files: 0 parsed, 5 skipped" in capsys.readouterr().err
    assert outputs(out) == before


def test_resume_redoes_a_missing_output_and_ignores_leftover_partials(parser_model, tmp_path, capsys):
    tree, out = make_tree(tmp_path / "in"), tmp_path / "out"
    assert parse_dir(parser_model, tree, out) == 0
    reference = outputs(out)
    # a killed run: b's output never renamed (only its partial file is there), c's leftover partial
    (out / "sub" / "b.conllu").unlink()
    (out / "sub" / ".b.conllu.123-abc.partial").write_text(reference["sub/b.conllu"][:50])
    (out / "sub" / "deep" / ".c.conllu.9-x.partial").write_text("junk")
    capsys.readouterr()
    assert parse_dir(parser_model, tree, out) == 0
    assert "files: 1 parsed, 4 skipped" in capsys.readouterr().err
    assert not (out / "sub" / ".b.conllu.123-abc.partial").exists()  # cleaned once b is written
    assert (out / "sub" / "deep" / ".c.conllu.9-x.partial").exists()  # c skipped: its output is there
    assert {k: v for k, v in outputs(out).items() if "partial" not in k} == reference
    assert parse_dir(parser_model, tree, out, "--overwrite") == 0
    assert "files: 5 parsed, 0 skipped" in capsys.readouterr().err
    assert outputs(out) == reference  # c's leftover removed after its rewrite


N_KILLED = 12


def test_a_killed_run_leaves_only_complete_outputs(sentencizer_model, tmp_path):
    tree, out = tmp_path / "in", tmp_path / "out"
    tree.mkdir()
    line = "The cat sat on the mat. " * 4 + "\n"
    for i in range(N_KILLED):
        (tree / f"f{i:02d}.txt").write_text(line * 400)
    expected_dir = tmp_path / "expected"
    assert main(["parse", str(sentencizer_model), str(tree / "f00.txt"), "--output-dir", str(expected_dir),
                 "--quiet"]) == 0
    expected = (expected_dir / "f00.conllu").read_text()
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    command = [sys.executable, "-m", "spacy_hcparse", "parse", str(sentencizer_model), str(tree),
               "--output-dir", str(out), "--quiet"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while not list(out.glob("*.conllu")) and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(0.1)  # into the next file
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    written = sorted(out.glob("*.conllu"))
    assert written, "the run wrote nothing before it was killed"
    for path in written:
        assert path.read_text() == expected.replace("# sent_id = f00-", f"# sent_id = {path.stem}-")  # whole
    assert len(written) < N_KILLED, "the run finished before it was killed: use larger files"
    assert subprocess.run(command, env=env, capture_output=True).returncode == 0
    assert len(list(out.glob("*.conllu"))) == N_KILLED
    assert not list(out.glob(".*.partial"))


def test_failing_files_are_reported_and_skipped(parser_model, tmp_path, capsys):
    tree, out = make_tree(tmp_path / "in"), tmp_path / "out"
    (tree / "sub" / "latin.txt").write_bytes("The cat sat .\ncaf\xe9 .\n".encode("latin-1"))
    (tree / "bad.conllu").write_text("1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n2\tb\t_\t_\t_\n\n")
    assert parse_dir(parser_model, tree, out) == EXIT_SOME_FAILED
    printed = capsys.readouterr().err
    assert "files: 5 parsed, 0 skipped (output already there), 2 failed" in printed
    assert f"failed: {tree / 'bad.conllu'}:2: expected 10 tab-separated columns" in printed
    assert f"failed: {tree / 'sub' / 'latin.txt'}:2: not valid UTF-8" in printed
    assert sorted(outputs(out)) == EXPECTED  # nothing for the bad files, no partial file left
    strict = tmp_path / "strict"
    assert parse_dir(parser_model, tree, strict, "--strict") == 1
    assert "files: 1 parsed, 0 skipped (output already there), 1 failed" in capsys.readouterr().err  # a, then bad
    assert sorted(outputs(strict)) == ["a.conllu"]


def test_failure_in_the_pipeline_names_the_file(tmp_path):
    class Broken:
        def pipe(self, texts, **kwargs):
            for i, _ in enumerate(texts):
                if i == 2:
                    raise RuntimeError("boom")
                yield spacy.blank("en")("x")

    source = tmp_path / "t.txt"
    source.write_text("one\ntwo\nthree\nfour\n")
    result = parse_task(Broken(), FileTask(source, tmp_path / "o" / "t.conllu"))
    assert (result.status, result.error) == ("failed", f"{source}: RuntimeError: boom")
    assert not list((tmp_path / "o").iterdir())  # the partial output removed


@pytest.mark.parametrize("parallel", ["files", "docs"])
def test_two_processes_give_the_same_output_as_one(parser_model, tmp_path, capsys, parallel):
    tree = make_tree(tmp_path / "in", n_lines=60)
    assert parse_dir(parser_model, tree, tmp_path / "one") == 0
    assert parse_dir(parser_model, tree, tmp_path / "two", "--n-process", "2", "--parallel", parallel) == 0
    printed = capsys.readouterr().err
    assert "files: 5 parsed" in printed.split("\n\n")[-1]
    assert ("2 processes over files" if parallel == "files" else "nlp.pipe(n_process=2)") in printed
    assert outputs(tmp_path / "two") == outputs(tmp_path / "one")


def test_json_outputs_and_empty_file(parser_model, tmp_path):
    tree, out = tmp_path / "in", tmp_path / "out"
    tree.mkdir()
    (tree / "x.txt").write_text(TEXTS[0] + "\n" + TEXTS[2] + "\n")
    (tree / "empty.txt").write_text("")
    assert main(["parse", str(parser_model), str(tree), "--output-dir", str(out), "--format", "json",
                 "--quiet"]) == 0
    assert json.loads((out / "empty.json").read_text()) == []
    records = json.loads((out / "x.json").read_text())
    assert [r["text"] for r in records] == [TEXTS[0], TEXTS[2]]
    assert [w["form"] for s in records[1]["sentences"] for w in s] == SENTENCES[2][0]


def test_several_inputs_need_an_output_dir(parser_model, tmp_path, capsys):
    tree = make_tree(tmp_path / "in")
    assert main(["parse", str(parser_model), str(tree)]) == 1
    assert "give --output-dir" in capsys.readouterr().err
    assert main(["parse", str(parser_model), str(tree / "a.txt"), str(tree / "sub"), "--output-dir",
                 str(tmp_path / "out"), "--pattern", "*.txt", "--quiet"]) == 0
    assert sorted(outputs(tmp_path / "out")) == ["a.conllu", "b.conllu", "deep/c.conllu", "deep/e.conllu"]


def test_a_stream_holds_a_bounded_number_of_lines(sentencizer_model):
    """Lines are read as docs are written: never more than a couple of batches ahead."""
    nlp = spacy.load(sentencizer_model)
    state = {"read": 0, "written": 0, "ahead": 0}

    def lines():
        for i in range(5000):
            state["read"] += 1
            yield f"Line {i} is here. It ends.\n"

    class Out:
        def write(self, text):
            if "\n# text = Line" in text and " is here.\n" in text:
                state["written"] += 1
                state["ahead"] = max(state["ahead"], state["read"] - state["written"])

    words = parse_stream(nlp, lines(), Out(), options=ParseOptions(batch_size=16))
    assert words == 5000 * 8 and state["written"] == 5000
    assert state["ahead"] <= 2 * 16 + 1


def test_parse_corpus_api(sentencizer_model, tmp_path):
    tree = make_tree(tmp_path / "in")
    tasks = plan_files([tree], tmp_path / "out", ["*.txt"])
    summary = parse_corpus(sentencizer_model, tasks, progress=False)
    assert (summary.parsed, summary.skipped, summary.failed) == (4, 0, [])
    assert summary.words > 0 and summary.words_per_sec > 0
    again = parse_corpus(sentencizer_model, tasks, progress=False)
    assert (again.parsed, again.skipped, again.words) == (0, 4, 0)


def test_one_file_with_two_processes_is_parsed_in_this_process(sentencizer_model, tmp_path):
    source = tmp_path / "one.txt"
    source.write_text("One line. Two sentences.\n")
    tasks = plan_files([source], tmp_path / "out")
    summary = parse_corpus(sentencizer_model, tasks, n_process=2, progress=False)
    assert (summary.parsed, summary.workers) == (1, "1 process: fewer than 2 files to parse")


def test_an_interrupted_pool_stops_at_once(parser_model, tmp_path):
    """Ctrl-C (SIGINT to the process group) while workers parse: the run stops at once, without
    finishing the files under way or taking the next ones (each takes seconds)."""
    tree, out = tmp_path / "in", tmp_path / "out"
    tree.mkdir()
    for i in range(6):
        (tree / f"f{i}.txt").write_text("\n".join(TEXTS * 6000) + "\n")  # 312,000 words
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    command = [sys.executable, "-m", "spacy_hcparse", "parse", str(parser_model), str(tree),
               "--output-dir", str(out), "--quiet", "--n-process", "2"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True,
                            # a job started in the background inherits SIGINT ignored, and Python then
                            # keeps ignoring it: give the run the default disposition Ctrl-C has
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 120
    while len(list(out.glob(".*.partial"))) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    interrupted = time.time()
    try:
        proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the interrupted run did not stop")
    assert proc.returncode != 0
    # a file takes about 30 s to parse: stopping within 15 s (a loaded machine needs more than a
    # few seconds to end two workers) is stopping without finishing the files under way
    assert time.time() - interrupted < 15.0
    assert not list(out.glob("*.conllu"))  # nothing finished, nothing half-written under a final name
