"""Models fitted to noisy measurements: fitting, marginals, sampling, matching, and model files.
Reads only measurements and public domains (post-processing): never the data, no privacy cost.
Hands on a ``Model`` that engines refine as they measure and the generator samples codes from.

``independent``: a product of 1-way distributions. ``graphical``: a Markov random field on a
junction tree, fitted by ``fitting`` (Private-PGM style). ``compression`` maps merged codes.
"""
