"""Evaluation: how faithful, useful and private-looking a synthetic table is beside the original.
Reads the original private table: its results are NOT differentially private and are for the data owner.
Hands on an ``Evaluation`` (metrics, JSON) and one HTML report; nothing of it goes into a release.

``evaluate`` compares two tables with the same columns, whichever tool made the synthetic one, on a
discretisation drafted from the original (``discretisation``; a release's own schema is scored beside
it), and returns an ``Evaluation``: fidelity, associations, PCA, a query workload, ML utility and
privacy diagnostics (``evaluation``), and with a holdout the attacks on the synthetic table
(``attacks``: Anonymeter's three and a membership inference, against a bootstrap and a shuffle of
the training rows too); ``write_report`` renders it as one self-contained HTML page (``report``). A relational release is compared with its original database by ``relational``
(``evaluate_database``: each table, links, children per parent, marginals across a relation, beside
the naive release) and rendered by ``relational_report``.

The public names are imported on first use, so a module that needs one light piece (the inspector
takes ``association.cramers_v``) does not load scikit-learn and matplotlib with it.
"""

from importlib import import_module
from typing import Any

_HOMES = {"NOT_DP_NOTICE": "evaluation", "SCHEMA_VERSION": "evaluation", "Evaluation": "evaluation",
          "evaluate": "evaluation", "report_html": "report", "write_report": "report"}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    globals()[name] = value
    return value
