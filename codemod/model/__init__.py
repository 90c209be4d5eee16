"""Shared vocabulary: rules, options, diagnostics, and how text and lines are read."""
