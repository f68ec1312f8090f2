"""thinc layers, one per file: the sentence encoder and the factor scorers."""
