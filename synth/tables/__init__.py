"""Reading and writing tables, and the backends that count private rows where they are."""
