"""Reliability tests: the journal never loses or invents a fact."""
