"""Counting backends: where the private rows are read and counted (see ``synth.backends.base``)."""
