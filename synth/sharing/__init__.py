"""Sharing a release: the release card a privacy officer signs, and Ed25519 signatures of its files.

It reads a release folder (its Descriptions, manifest and relational record, and the synthetic files'
row counts) and never the private data: whatever it writes is exactly as private as the release.
The modules are imported where used (``synth.sharing.card``, ``synth.sharing.signing``), so that this
package costs nothing at start-up.
"""
