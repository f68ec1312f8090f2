"""Losses and updates: structured hinge, head-selection cross-entropy, label cross-entropy."""
