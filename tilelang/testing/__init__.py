"""Test helpers shared across the project: random program strategies for hypothesis
(:mod:`tilelang.testing.strategies`) and the SEED programs' workloads
(:mod:`tilelang.testing.workloads`)."""
