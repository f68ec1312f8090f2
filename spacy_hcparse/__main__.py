"""``python -m spacy_hcparse parse|evaluate`` (see ``spacy_hcparse.cli``)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
