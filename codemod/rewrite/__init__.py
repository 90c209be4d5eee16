"""Rewriting one module's text: locate, plan, visit, check, format, splice."""
