"""What a column is: its kind, public domain, code layout and written shape, and a release's schema.
Reads no table itself: it defines reading cells and encoding them, applied to the cells it is handed.
Hands on ``Column``, ``Schema``, ``Domain`` (names and code sizes) and the encoding to every stage above.
"""
