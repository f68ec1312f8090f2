"""setup.cfg's entry points name every function spacy_hcparse registers with spaCy."""
import configparser
from pathlib import Path

import pytest
import spacy_hcparse  # noqa: F401  (registers everything)
import spacy_hcparse.tokenizer  # noqa: F401  (its registry decorator, also where no installed entry point names it yet)
from spacy.util import registry

SETUP = Path(__file__).parent.parent / "setup.cfg"
GROUPS = ["architectures", "misc", "readers", "scorers", "loggers", "tokenizers"]


def declared(group: str) -> dict:
    parser = configparser.ConfigParser()
    parser.read(SETUP)
    lines = parser["options.entry_points"][group].strip().splitlines()
    return dict(line.split(" = ") for line in lines)


@pytest.mark.parametrize("group", GROUPS)
def test_every_registered_function_has_an_entry_point(group):
    table = getattr(registry, group)
    ours = {name for name in table.get_all() if name.startswith("spacy_hcparse.")}
    entry_points = declared(f"spacy_{group}")
    assert ours == set(entry_points)
    for name, target in entry_points.items():
        module, function = target.split(":")
        assert getattr(__import__(module, fromlist=[function]), function) is table.get(name)
