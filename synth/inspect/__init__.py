"""The inspector: a person's view of a Description, as console text or a self-contained HTML report.

``inspect_text`` prints the privacy ledger and each column's distribution; ``inspect_report``
writes one HTML page (summary, ledger, learnt structure, distributions, pairwise dependence) for
someone deciding whether to share a release. Both read only the Description, never private data:
what they show is as private as the release itself.
"""

from synth.inspect.report import inspect_report, report_html
from synth.inspect.text import inspect_text

__all__ = ["inspect_report", "inspect_text", "report_html"]
