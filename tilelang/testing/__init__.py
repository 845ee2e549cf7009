"""Test helpers shared across the project: random program strategies for hypothesis
(:mod:`tilelang.testing.strategies`)."""
