"""Generation: a model fitted to a Description's measurements samples synthetic rows, decoded to values.
Reads only the Description (and its model file), never private data: it costs no privacy.
Hands on synthetic tables, under conditions (evidence on the codes) when asked.
"""
