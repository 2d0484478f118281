"""Tests of `explorer.evidence`: signed runs, attestations and reading transcripts as evidence."""
