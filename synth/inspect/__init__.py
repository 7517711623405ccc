"""The inspector: a person's view of a Description, as console text or a self-contained HTML report.
Reads only the Description (and a model fitted to it): what it shows is as private as the release.
Hands on text and one page for someone deciding whether to share a release.

``inspect_text`` prints the privacy ledger and each column's distribution; ``inspect_report``
writes one HTML page (summary, ledger, learnt structure, distributions, pairwise dependence).
"""

from synth.inspect.report import inspect_report, report_html
from synth.inspect.text import inspect_text

__all__ = ["inspect_report", "inspect_text", "report_html"]
