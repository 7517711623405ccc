"""The ``synth`` command line: demo, profile, describe, generate, run, inspect, evaluate; card, sign, verify.

Every command maps onto a verb of ``synth.api``. Errors that synth raises on purpose
(``SynthError``) are printed as one paragraph without a traceback and exit with status 2;
Ctrl-C exits with 130 and leaves no half-written file (outputs are written atomically).

This module imports only the standard library and light synth modules at the top; each command
imports what it needs (pandas, the engines, the evaluation stack) when it runs, inside ``main``'s
error handling, so ``synth --help`` and ``--version`` start fast and Ctrl-C during start-up is a
one-line exit like any other.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from synth.defaults import DEFAULT_DELTA_WITHOUT_PROFILE, FIT_ITERATIONS, MAX_DELTA, VERSION
from synth.errors import SynthError
from synth.files import check_writable
from synth.sharing import commands as sharing

if TYPE_CHECKING:
    from synth.api import RunResult
    from synth.evaluate import Evaluation
    from synth.evaluate.relational import DatabaseEvaluation
    from synth.progress import Progress
    from synth.release.description import Description

DEMO_TARGET = "income"
DATA_OR_DATABASE = ("CSV or Parquet file, or a database: a SQLite or DuckDB file, a folder of CSV/Parquet files (one per "
                    "table), or a PostgreSQL URL (postgresql://user@host:port/name)")
SEEDED_WARNING = ("warning: this release was made with a seed (--seed or the profile's seed), so its noise is "
                  "reproducible and it carries NO privacy guarantee; it is for tests and benchmarks only and "
                  "must not be shared (the Description records that it was seeded, never the seed).")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1, got {value}")
    return value


def number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 1.0, got {text!r}") from None


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display or notes")
    p.add_argument("--force", action="store_true", help="replace output files that exist")


def _add_budget(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", type=Path, help="release profile (TOML); see profiles/")
    p.add_argument("--epsilon", type=number, help="privacy budget epsilon (> 0); overrides the profile")
    p.add_argument("--delta", type=number, help=f"privacy budget delta in [0, {MAX_DELTA:g}] (above that only if the "
                   "profile sets accept_large_delta); overrides the profile "
                   f"(default without a profile: {DEFAULT_DELTA_WITHOUT_PROFILE:g})")
    p.add_argument("--engine", help="engine name (default: the profile's, else 'aim' when delta > 0, 'independent' when delta = 0)")
    p.add_argument("--seed", type=int, help="reproducible noise for tests/benchmarks (never share the result)")
    p.add_argument("--accept-rough-domains", action="store_true", default=None,
                   help="release even when a column's domain cannot be found under DP (such columns are left out)")


def _add_backend(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", default="auto", metavar="NAME",
                   help="where the rows are counted: memory (pandas), duckdb (out of core; pip install "
                        "'synth[duckdb]'), spark (a Spark session; pip install 'synth[spark]'), or auto (the "
                        "default: duckdb for large files when installed, else memory)")
    p.add_argument("--spark-master", metavar="URL",
                   help="Spark master (local[*], spark://host:7077, yarn) or Spark Connect URL (sc://host); "
                        "default: $SPARK_REMOTE, else $MASTER, else local[*]")


def _source(args: argparse.Namespace, progress: Progress, path: Path | None = None, which: str = ""):
    """The data file (``path``, else ``args.data``) with its counting backend; which backend runs is
    said on the console (for the ``which`` table, when given)."""
    from synth.tables.source import TableSource

    source = TableSource(str(args.data if path is None else path), args.backend, args.spark_master)
    backend, why = source.resolved()
    if backend != "memory" or (args.backend == "auto" and why.startswith("the file is")):
        progress.message(f"counting backend{f' for the {which} table' if which else ''}: {backend} ({why})")
    return source


def _add_sampling(p: argparse.ArgumentParser) -> None:
    # no argparse choices: a bad name is a SamplingError, printed as one paragraph like any other
    p.add_argument("--sampling", default="matched", metavar="SCHEME",
                   help="matched (default: rounded draws adjusted until the table's 3-way marginals follow the "
                        "model's), rounded (each column's counts per parent configuration rounded at random) or iid "
                        "(independent draws, with multinomial noise)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="synth", description="Differentially private synthetic data.")
    parser.add_argument("--version", action="version", version=f"synth {VERSION}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("demo", help="run the whole pipeline on the bundled Adult census sample")
    p.add_argument("-o", "--out", type=Path, default=Path("synth-demo"), help="output folder (default: synth-demo)")
    p.add_argument("--epsilon", type=number, help="privacy budget (default: the demo profile's, 1.0)")
    p.add_argument("--seed", type=int, help="reproducible noise (test mode)")
    _add_common(p)

    p = sub.add_parser(
        "profile", help="draft a release profile for a person to review: under DP with --epsilon (recommended), "
        "else read from the data (not DP)",
        description="Draft a release profile for a person to review. With --epsilon, each column's kind, domain "
        "and shape are found under DP with a share of that budget (--share), written as dp-estimated, and the "
        "profile records what was spent: `synth run DATA --profile FILE` charges it first and spends the rest, so "
        "the release stays end-to-end DP. Without --epsilon (second choice), every domain is read from the data "
        "and marked data-derived: not DP, to be replaced with public knowledge before a release.")
    p.add_argument("data", type=_data_argument, help=DATA_OR_DATABASE)
    p.add_argument("-o", "--out", type=Path, required=True, help="profile to write (TOML)")
    p.add_argument("--epsilon", type=number, help="the release's whole privacy budget (> 0): draft under DP, spending "
                   "--share of it; the run with the profile spends the rest")
    p.add_argument("--delta", type=number, help=f"privacy budget delta in [0, {MAX_DELTA:g}] of the release (with "
                   f"--epsilon; default {DEFAULT_DELTA_WITHOUT_PROFILE:g}; 0: pure DP, text columns then need a profile)")
    p.add_argument("--share", type=number, default=None, metavar="SHARE",
                   help="share of the budget the draft under DP may spend (default 0.2: the 10 %% a release without a "
                        "profile spends on domains plus its 10 %% reserve for a second look at text columns)")
    p.add_argument("--seed", type=int, help="reproducible noise for tests/benchmarks (with --epsilon; never share "
                   "the result, and give the run a seed too)")
    p.add_argument("--missing", action="append", default=None, metavar="MARKER",
                   help="a cell text that means missing, e.g. '<NULL>' (repeatable; empty cells always are)")
    _add_backend(p)
    _add_common(p)

    p = sub.add_parser("describe", help="measure a private table under DP and write the Description (JSON)")
    p.add_argument("data", type=Path, help="CSV or Parquet file")
    p.add_argument("-o", "--out", type=Path, required=True, help="Description to write (JSON)")
    p.add_argument("--rows", type=positive_int, help="rows `synth generate` makes by default (recorded in the Description)")
    _add_budget(p)
    _add_backend(p)
    _add_common(p)

    p = sub.add_parser("generate", help="sample a synthetic table from a Description, or a synthetic database from a "
                       "relational release (no privacy cost)",
                       description="Sample a synthetic table from a Description. The fitted model is kept beside "
                       "the Description (description.json -> description.model.npz) and reused while it matches. "
                       "Given a relational release folder, sample a new synthetic database from it.")
    p.add_argument("description", type=Path, help="a Description, or a relational release folder")
    p.add_argument("-o", "--out", type=Path, required=True, help="CSV or Parquet file to write (for a relational "
                   "release: a .sqlite or .duckdb file, or a folder of CSV files)")
    p.add_argument("--rows", type=positive_int, help="rows to generate (default: the profile's, else the noisy count; "
                   "for a relational release, the root table's rows)")
    p.add_argument("--seed", type=int, help="reproducible sampling")
    p.add_argument("--condition", action="append", default=[], metavar="COLUMN=VALUE",
                   help="sample only rows meeting it, exactly: a value (sex=Female), a range of a numeric or date "
                        "column, ends included (age=30..40, age=30.., joined=..2020-06-30); repeatable, one per column")
    p.add_argument("--iterations", type=positive_int, default=FIT_ITERATIONS,
                   help=f"graphical-model fitting iterations (mst, aim; default {FIT_ITERATIONS})")
    _add_sampling(p)
    _add_common(p)

    p = sub.add_parser("run", help="describe + generate: write synthetic.csv, description.json (with its fitted model "
                       "description.model.npz), manifest.json; for a database, a synthetic database of the same kind, "
                       "one Description per table, relational.json and manifest.json (DP per person)")
    p.add_argument("data", type=_data_argument, help=DATA_OR_DATABASE)
    p.add_argument("-o", "--out", type=Path, required=True, help="output folder")
    p.add_argument("--rows", type=positive_int, help="rows to generate")
    p.add_argument("--holdout", metavar="SHARE", help="set each row aside with this probability (e.g. 10%%) before "
                   "anything is described, written beside the data as NAME.holdout.csv: the control set of `synth "
                   "evaluate --attacks` (private: keep it with the data, never with the release)")
    _add_budget(p)
    _add_backend(p)
    _add_sampling(p)
    _add_common(p)

    p = sub.add_parser("inspect", help="print what a Description holds: ledger and noisy distributions (or what a "
                       "relational release holds: its guarantee, bounds and spending per table)")
    p.add_argument("description", type=Path, help="a Description, or a relational release folder")
    p.add_argument("--report", type=Path, metavar="PATH",
                   help="write a self-contained HTML report (summary, ledger, structure, distributions, "
                        "dependence) instead of printing")
    p.add_argument("--force", action="store_true", help="replace the report if it exists")

    p = sub.add_parser("evaluate", help="compare a synthetic table (or a relational release) with the original "
                       "(not DP: for the data owner)")
    p.add_argument("original", type=_data_argument, help="the original table, or database (SQLite, DuckDB, folder of "
                   "tables, PostgreSQL URL)")
    p.add_argument("synthetic", type=Path, help="the synthetic table, or for a database the release folder "
                   "`synth run DATABASE` wrote")
    p.add_argument("--description", type=Path, help="Description of the release (its columns are compared, its "
                   "schema is scored beside the discretisation drafted from the original, its ledger is shown)")
    p.add_argument("--target", metavar="COLUMN", help="column that ML utility predicts (classification for a "
                   "categorical or boolean column, regression for a numeric one)")
    p.add_argument("--report", type=Path, metavar="PATH", help="write a self-contained HTML report")
    p.add_argument("--json", type=Path, help="write every metric to this JSON file")
    p.add_argument("--seed", type=int, default=0, help="seed of the samples the metrics draw (default 0)")
    p.add_argument("--missing", action="append", default=None, metavar="MARKER",
                   help="a cell text that means missing (repeatable)")
    p.add_argument("--attacks", action="store_true", help="also run attacks on the synthetic table: Anonymeter's "
                   "singling out, linkability and inference, and a membership-inference attack with the empirical "
                   "epsilon it proves (needs --holdout)")
    p.add_argument("--holdout", type=Path, metavar="FILE", help="real rows of the same population NOT given to "
                   "`synth run` (the attacks' control set; `synth run DATA --holdout 10%%` sets one aside)")
    _add_backend(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display (the results are still printed)")
    p.add_argument("--force", action="store_true", help="replace output files that exist")
    sharing.add_parsers(sub)
    return parser


def _data_argument(text: str) -> Path | str:
    """A data argument: a PostgreSQL URL as it is (a path would fold its "//"), anything else a path."""
    from synth.relational import is_url

    return text if is_url(text) else Path(text)


def _markers(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(dict.fromkeys(["", *(args.missing or [])]))


def _print_evaluation(evaluation: Evaluation | DatabaseEvaluation, report: Path | None, json_path: Path | None) -> None:
    print("\n".join(evaluation.lines()))
    for what, path in (("report", report), ("metrics (JSON)", json_path)):
        if path is not None:
            print(f"wrote the evaluation {what} to {path}")


def _summarise_run(result: RunResult) -> None:
    spent = result.description.privacy["spent"]
    print(f"wrote {result.rows:,} synthetic rows to {result.files['synthetic']}")
    print(f"wrote the Description to {result.files['description']}, its fitted model to {result.files['model']} "
          f"and the manifest to {result.files['manifest']}")
    print(f"privacy spent: epsilon={spent['epsilon']:.6g}, delta={spent['delta']:.3g} "
          f"({result.description.neighbouring}); domains: "
          + ", ".join(sorted(set(result.description.domain_sources.values()))))
    steps = result.description.privacy.get("steps") or []
    if steps:
        print("of which " + "; ".join(f"{step['step']}: epsilon={step['spent']['epsilon']:.6g} on its own "
                                      f"({step['ledger_entries']['count']} ledger entries)" for step in steps))


def _warn_if_seeded(description: Description) -> None:
    """The seeded-release warning, on stderr even with --quiet: a seed from the profile counts too."""
    if description.seeded:
        print(SEEDED_WARNING, file=sys.stderr)


def cmd_demo(args: argparse.Namespace, progress: Progress) -> None:
    from synth import api

    data = resources.files("synth") / "data"
    report, json_path = args.out / "evaluation.html", args.out / "evaluation.json"
    if args.out.is_dir():  # refuse before the release is made and written, as `run` does for its files
        for path in (report, json_path):
            check_writable(path, args.force)
    with resources.as_file(data / "adult.csv.gz") as csv, resources.as_file(data / "adult.toml") as toml:
        result = api.run(csv, args.out, toml, epsilon=args.epsilon, seed=args.seed, force=args.force,
                         progress=progress, report_to=None if args.quiet else sys.stderr)
        _warn_if_seeded(result.description)
        progress.message("evaluating the synthetic table against the original")
        evaluation = api.evaluate(csv, result.files["synthetic"], result.description, target=DEMO_TARGET,
                                  report=report, json_path=json_path, force=args.force, progress=progress)
    if not args.quiet:
        _summarise_run(result)
        _print_evaluation(evaluation, report, json_path)


def cmd_profile(args: argparse.Namespace, progress: Progress) -> None:
    from synth import api
    from synth.domains.profile import save_profile
    from synth.errors import BudgetError

    check_writable(args.out, args.force)  # before anything is read or spent
    markers = _markers(args)
    if api.is_database(args.data):
        if args.epsilon is not None:
            from synth.errors import RelationalError
            raise RelationalError("drafting a database's profile under DP is not supported yet: leave out --epsilon "
                                  "to draft its tables and keys with domains read from the data (to review), or run "
                                  "`synth run DATABASE --epsilon E` without a profile (domains found under DP).")
        api.draft_database_profile(args.data, args.out, force=args.force)
        if not args.quiet:
            print(f"wrote a DATA-DERIVED draft profile of the database to {args.out}: its tables and keys come from the "
                  "schema (public), its domains were read from the data without noise (NOT differentially private). "
                  "Review them and mark them source = \"public\", and choose each max_children from public knowledge.")
        return
    if args.epsilon is None:
        if args.delta is not None or args.share is not None or args.seed is not None:
            raise BudgetError("--delta, --share and --seed apply to a draft under DP; give --epsilon too (the "
                              "release's whole budget, e.g. --epsilon 1), or leave them out for a draft read from "
                              "the data (not DP).")
        profile = api.draft_profile(args.data, markers)
        save_profile(profile, args.out, force=args.force)
        if not args.quiet:
            print(f"wrote a DATA-DERIVED draft profile to {args.out}: its domains were read from the data without "
                  "noise, so a release with them is NOT differentially private. Review them, replace them with public "
                  "knowledge and mark them source = \"public\". Better: draft it under DP, `synth profile "
                  f"{args.data} --epsilon 1 -o {args.out}` (a share of the release's budget, charged by the run).")
        return
    from synth.domains.drafting import PROFILE_SHARE

    source = _source(args, progress)
    try:
        profile = api.draft_profile(source, markers, epsilon=args.epsilon, delta=args.delta,
                                    share=PROFILE_SHARE if args.share is None else args.share, seed=args.seed,
                                    progress=progress, report_to=None if args.quiet else sys.stderr)
    finally:
        source.close()
    save_profile(profile, args.out, force=args.force)
    assert profile.dp_draft is not None
    if profile.dp_draft.seeded:
        print("warning: this profile was drafted with a seed (--seed), so its noise is reproducible and it carries NO "
              "privacy guarantee; a release with it carries none either. For tests and benchmarks only (the profile "
              "records that it was seeded, never the seed).", file=sys.stderr)
    if not args.quiet:
        spent, budget = profile.dp_draft.spent, profile.dp_draft.budget
        amount = f"epsilon={spent['epsilon']:.6g}, delta={spent['delta']:.3g}"
        if spent.get("rho") is not None:
            amount = f"rho={spent['rho']:.6g} of {budget['rho']:.6g} ({amount} on its own)"
        print(f"wrote a profile drafted under DP to {args.out}; spent {amount} of the budget epsilon={profile.epsilon:g}, "
              f"delta={profile.delta:g} (share {profile.dp_draft.share:g}). Review it (edits are public knowledge), then "
              f"`synth run {args.data} --profile {args.out} -o release/` charges that first and spends the rest.")


def cmd_describe(args: argparse.Namespace, progress: Progress) -> None:
    from synth import api
    from synth.release.description import save_description

    check_writable(args.out, args.force)
    source = _source(args, progress)
    try:
        description = api.describe(source, args.profile, epsilon=args.epsilon, delta=args.delta,
                                   engine=args.engine, rows=args.rows, seed=args.seed,
                                   accept_rough_domains=args.accept_rough_domains, progress=progress,
                                   report_to=None if args.quiet else sys.stderr)
    finally:
        source.close()
    save_description(description, args.out, force=args.force)
    _warn_if_seeded(description)
    if not args.quiet:
        print(f"wrote the Description to {args.out}")


def _conditions(texts: list[str]) -> dict[str, str]:
    """``--condition`` texts as {column: value}; ConditionError for a malformed one or a column named twice."""
    from synth.errors import ConditionError
    from synth.generation.conditions import parse_condition

    conditions: dict[str, str] = {}
    for text in texts:
        column, value = parse_condition(text)
        if column in conditions:
            raise ConditionError(f"--condition names column {column!r} twice; give one condition per column.")
        conditions[column] = value
    return conditions


def _generate_database(args: argparse.Namespace, progress: Progress) -> None:
    from synth.errors import RelationalError
    from synth.relational.release import generate_again

    if args.condition or args.iterations != FIT_ITERATIONS:
        raise RelationalError("--condition and --iterations are not supported for a relational release; leave them out.")
    synthetic = generate_again(args.description, args.out, args.rows, args.seed, args.sampling, args.force, progress)
    if not args.quiet:
        rows = ", ".join(f"{name}: {count:,} rows" for name, count in synthetic.rows.items())
        print(f"wrote a synthetic database ({rows}) to {args.out}")


def cmd_generate(args: argparse.Namespace, progress: Progress) -> None:
    from synth import api
    from synth.relational.stored import is_release

    if is_release(args.description):
        _generate_database(args, progress)
        return
    from synth.generation.conditions import read_conditions
    from synth.model.sampling import check_sampling
    from synth.release.description import load_description
    from synth.tables.tableio import check_table_output, write_table_chunks

    check_table_output(args.out, args.force)  # before any work
    check_sampling(args.sampling)
    conditions = _conditions(args.condition)
    description = load_description(args.description)
    read_conditions(description.schema, conditions)  # a wrong column or value is refused before a fit
    fitted = api.kept_model(description, args.description, args.iterations, progress=progress,
                            report_to=None if args.quiet else sys.stderr)
    chunks = fitted.sample_chunks(args.rows, conditions, args.seed, args.sampling, progress=progress)  # large tables: piece by piece
    rows = write_table_chunks(chunks, args.out, force=args.force, missing_text=description.schema.missing_text)
    if not args.quiet:
        print(f"wrote {rows:,} synthetic rows to {args.out}")


def _run_database(args: argparse.Namespace, progress: Progress) -> None:
    from synth import api

    if args.rows is not None or args.accept_rough_domains or args.backend != "auto":
        from synth.errors import RelationalError
        raise RelationalError("--rows, --accept-rough-domains and --backend are not supported for a database yet "
                              "(a database's row counts come from its noisy measurements); leave them out.")
    result = api.run_database(args.data, args.out, args.profile, epsilon=args.epsilon, delta=args.delta,
                              engine=args.engine, seed=args.seed, force=args.force, sampling=args.sampling,
                              progress=progress, report_to=None if args.quiet else sys.stderr)
    if result.release.noise.get("seeded"):
        print(SEEDED_WARNING, file=sys.stderr)
    if not args.quiet:
        spent = result.release.spent
        rows = ", ".join(f"{name}: {count:,} rows" for name, count in result.synthetic.rows.items())
        print(f"released the database under DP per person (a {result.release.structure.root.name} row with all its "
              f"rows): spent epsilon={spent['epsilon']:.6g}, delta={spent['delta']:.3g}; synthetic {rows}; wrote "
              f"{', '.join(p.name for p in result.files.values())} to {args.out}")


def cmd_run(args: argparse.Namespace, progress: Progress) -> None:
    from synth import api

    if args.holdout is not None and (api.is_database(args.data, args.backend) or args.backend not in ("auto", "memory")):
        from synth.errors import AttackError
        raise AttackError("--holdout is supported for a table read into memory only (not a database, nor --backend "
                           "duckdb or spark, yet): set rows aside yourself and release the rest.")
    if api.is_database(args.data, args.backend):
        _run_database(args, progress)
        return
    source = args.data if args.holdout is not None else _source(args, progress)  # a holdout reads the file whole
    try:
        result = api.run(source, args.out, args.profile, epsilon=args.epsilon, delta=args.delta,
                         engine=args.engine, rows=args.rows, seed=args.seed, force=args.force,
                         accept_rough_domains=args.accept_rough_domains, sampling=args.sampling,
                         holdout=args.holdout, progress=progress, report_to=None if args.quiet else sys.stderr)
    finally:
        if not isinstance(source, Path):
            source.close()
    _warn_if_seeded(result.description)
    if result.holdout is not None:  # said even with --quiet: it is where private rows went
        print(f"note: set {args.holdout} of the rows aside before the release and wrote them to {result.holdout}: "
              "private data, to keep with the original and never to share with the release. Attack the release "
              f"with `synth evaluate {args.data} {result.files['synthetic']} --attacks --holdout {result.holdout}`.",
              file=sys.stderr)
    if not args.quiet:
        _summarise_run(result)


def cmd_inspect(args: argparse.Namespace, progress: Progress) -> None:
    from synth import api
    from synth.inspect import inspect_report, inspect_text
    from synth.relational.stored import is_release, read_release, summary_lines
    from synth.release.description import load_description

    if is_release(args.description):
        if args.report is not None:
            from synth.errors import RelationalError
            raise RelationalError("--report is for one Description; for a relational release, inspect each table's "
                                  "Description (TABLE.description.json in the release folder) with --report.")
        print("\n".join(summary_lines(read_release(args.description))))
        return

    description = load_description(args.description)
    if args.report is None:
        print(inspect_text(description))
        return
    model = api.saved_model(description, args.description)  # the model kept by run or generate, if it matches
    if model is not None:
        progress.message("using the fitted model saved beside the Description")
    inspect_report(description, args.report, force=args.force, progress=progress, model=model)
    print(f"wrote the inspection report to {args.report}")


def _evaluate_database(args: argparse.Namespace, progress: Progress) -> None:
    from synth import api
    from synth.errors import RelationalError

    if args.description is not None or args.target is not None or args.backend != "auto" or args.missing:
        raise RelationalError("--description, --target, --backend and --missing are not supported for a database "
                              "(the release folder holds every Description); leave them out.")
    evaluation = api.evaluate_database(args.original, args.synthetic, seed=args.seed, report=args.report,
                                       json_path=args.json, force=args.force, progress=progress)
    _print_evaluation(evaluation, args.report, args.json)


def _release_description(synthetic: Path) -> Path | None:
    """The Description `synth run` wrote beside a synthetic table it wrote (synthetic.csv or
    synthetic.parquet in a release folder with description.json and manifest.json), else None."""
    folder = synthetic.parent
    if synthetic.stem != "synthetic" or not (folder / "manifest.json").is_file():
        return None
    beside = folder / "description.json"
    return beside if beside.is_file() else None


def cmd_evaluate(args: argparse.Namespace, progress: Progress) -> None:
    from synth import api

    if api.is_database(args.original, args.backend):
        if args.attacks or args.holdout is not None:
            from synth.errors import AttackError
            raise AttackError("--attacks and --holdout are for one table, not a database (not supported yet).")
        _evaluate_database(args, progress)
        return
    description = args.description
    if description is None:
        description = _release_description(args.synthetic)
        if description is not None:
            print(f"note: scoring on the release's own Description beside the synthetic table too ({description}); "
                  "pass --description to choose another")
    sources = [_source(args, progress, path, which) for path, which in ((args.original, "original"),
                                                                         (args.synthetic, "synthetic"))]
    try:  # a table on a backend other than memory is counted there; its row-based scores read a sample
        evaluation = api.evaluate(sources[0], sources[1], description, missing_markers=_markers(args),
                                  target=args.target, seed=args.seed, report=args.report, json_path=args.json,
                                  force=args.force, attacks=args.attacks, holdout=args.holdout, progress=progress)
    finally:
        for source in sources:
            source.close()
    _print_evaluation(evaluation, args.report, args.json)  # the results, even with --quiet


COMMANDS = {"demo": cmd_demo, "profile": cmd_profile, "describe": cmd_describe, "generate": cmd_generate,
            "run": cmd_run, "inspect": cmd_inspect, "evaluate": cmd_evaluate, **sharing.COMMANDS}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    quiet = getattr(args, "quiet", False)
    try:
        from synth.progress import Progress

        COMMANDS[args.command](args, Progress(quiet=quiet))
    except SynthError as exc:
        print(f"synth {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # output piped into a command that stopped reading (e.g. head)
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"synth {args.command}: interrupted; no partial output was written.", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
