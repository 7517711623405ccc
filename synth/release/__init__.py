"""The release: the describer, the Description it writes, and the manifest."""
