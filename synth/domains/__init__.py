"""Public profiles, and the domains and shapes of columns found under DP."""
