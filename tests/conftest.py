import os

import pytest

# the tests create many parsers: none compiles ahead in a second process (tests/graph/test_ahead.py
# turns it on where it is the subject)
os.environ["SPACY_HCPARSE_COMPILE_AHEAD"] = "0"


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False, help="run slow data-backed tests")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip_slow = pytest.mark.skip(reason="needs --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
