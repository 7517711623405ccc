"""What a column is: its kind, public domain, codes, and how its values look as text."""
