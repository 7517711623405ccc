"""What the two HTML reports share: the page, its pieces, and the pictures."""
