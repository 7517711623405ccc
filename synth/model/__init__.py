"""Models fitted from noisy measurements (post-processing only, never the data).

``independent``: a product of 1-way distributions. ``graphical``: a Markov random field on a
junction tree, fitted by ``fitting`` (Private-PGM style). ``compression`` maps merged codes.
"""
