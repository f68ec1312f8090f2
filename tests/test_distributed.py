"""Parsing a corpus on a local Dask cluster of 2 worker processes (skipped without dask)."""
import pytest

pytest.importorskip("distributed")

from distributed import Client, LocalCluster  # noqa: E402

from spacy_hcparse.cli import EXIT_SOME_FAILED, main  # noqa: E402
from spacy_hcparse.corpus import parse_corpus, plan_files  # noqa: E402
from spacy_hcparse.distributed import parse_files_dask  # noqa: E402
from tests.test_corpus import EXPECTED, make_tree, outputs, parser_model  # noqa: E402,F401

PATTERNS = ["*.txt", "*.conllu"]


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            yield client


def test_dask_gives_the_local_outputs_and_resumes(parser_model, client, tmp_path):
    tree = make_tree(tmp_path / "in", n_lines=30)
    local = parse_corpus(parser_model, plan_files([tree], tmp_path / "local", PATTERNS), progress=False)
    summary = parse_files_dask(parser_model, [tree], tmp_path / "dask", client, patterns=PATTERNS, progress=False)
    assert (summary.parsed, summary.skipped, summary.failed) == (5, 0, [])
    assert summary.words == local.words and summary.workers == "Dask, 2 workers"
    assert outputs(tmp_path / "dask") == outputs(tmp_path / "local")
    assert sorted(outputs(tmp_path / "dask")) == EXPECTED
    (tmp_path / "dask" / "sub" / "b.conllu").unlink()
    again = parse_files_dask(parser_model, [tree], tmp_path / "dask", client, patterns=PATTERNS, progress=False)
    assert (again.parsed, again.skipped) == (1, 4)
    assert outputs(tmp_path / "dask") == outputs(tmp_path / "local")


def test_cli_against_the_scheduler_reports_a_failing_file(parser_model, client, tmp_path, capsys):
    tree = make_tree(tmp_path / "in")
    (tree / "bad.conllu").write_text("1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n2\tb\t_\t_\t_\n\n")
    address = client.scheduler.address
    argv = ["parse", str(parser_model), str(tree), "--output-dir", str(tmp_path / "out"), "--quiet",
            "--scheduler", address] + [a for p in PATTERNS for a in ("--pattern", p)]
    assert main(argv) == EXIT_SOME_FAILED
    printed = capsys.readouterr().err
    assert "files: 5 parsed, 0 skipped (output already there), 1 failed" in printed
    assert f"failed: {tree / 'bad.conllu'}:2: expected 10 tab-separated columns" in printed
    assert sorted(outputs(tmp_path / "out")) == EXPECTED


def test_a_model_missing_on_the_workers_stops_before_any_task(client, tmp_path, capsys):
    tree = make_tree(tmp_path / "in")
    with pytest.raises(ValueError, match="neither an installed package nor a directory on 2 Dask worker"):
        parse_files_dask(tmp_path / "nowhere", [tree], tmp_path / "out", client, progress=False)
