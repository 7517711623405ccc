"""Generation: sampling synthetic rows from a Description, under conditions if asked."""
