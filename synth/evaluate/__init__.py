"""Utility evaluation: how faithful, useful and private-looking a synthetic table is next to the original.

``evaluate`` compares two tables with the same columns, whichever tool made the synthetic one, and
returns an ``Evaluation``: fidelity, associations, PCA, a query workload, ML utility and privacy
diagnostics (``evaluation``); ``write_report`` renders it as one self-contained HTML page
(``report``). Everything here reads the original data: the results are NOT differentially private
and are for the data owner.
"""

from synth.evaluate.evaluation import NOT_DP_NOTICE, SCHEMA_VERSION, Evaluation, evaluate
from synth.evaluate.report import report_html, write_report

__all__ = ["NOT_DP_NOTICE", "SCHEMA_VERSION", "Evaluation", "evaluate", "report_html", "write_report"]
