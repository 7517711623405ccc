"""Public profiles, and the kinds, domains and shapes of columns found under DP where none is given.
Reads private cells, releasing only charged noisy counts (a profile drafted from the data says it is not DP).
Hands on a ``Profile``, the accountant its budget sets up, and the discovered columns of a release's schema.
"""
