"""A large pass runs on the compilation that took less time per cell lately, and follows the load."""

from __future__ import annotations

import numpy as np
import pytest

from synth.model import kernels
from synth.model.core_choice import MOST_SPACING, PROBE_EVERY, CoreChoice

CELLS = 1 << 18


def drive(choice: CoreChoice, one_core: float, every_core: float, calls: int, cells: int = CELLS,
          kernel: str = "row_sum") -> list[bool]:
    """``calls`` passes whose one-core and every-core compilations take these seconds per cell; the
    choices made, in order (True: every core)."""
    chosen = []
    for _ in range(calls):
        every = choice.every_core(kernel, cells)
        choice.record(kernel, cells, every, (every_core if every else one_core) * cells)
        chosen.append(every)
    return chosen


def test_every_core_runs_until_one_core_is_measured_faster_with_one_probe_in_each_run_of_calls():
    choice = CoreChoice()
    chosen = drive(choice, one_core=1.0, every_core=1.0, calls=20 * PROBE_EVERY)
    assert [i for i, every in enumerate(chosen) if not every] == [k * PROBE_EVERY - 1 for k in range(1, 21)]


def test_a_much_slower_compilation_is_probed_less_often():
    """Probed one call in 32 × how many times slower it was, at most 8: about one call in 32 of the time."""
    choice = CoreChoice()
    chosen = drive(choice, one_core=4.0, every_core=1.0, calls=40 * PROBE_EVERY)
    probes = [i for i, every in enumerate(chosen) if not every]
    assert probes[:2] == [PROBE_EVERY - 1, 2 * PROBE_EVERY - 1]  # until one core's time is known
    assert set(np.diff(probes[3:])) == {4 * PROBE_EVERY}
    chosen = drive(CoreChoice(), one_core=50.0, every_core=1.0, calls=60 * PROBE_EVERY)
    assert set(np.diff([i for i, every in enumerate(chosen) if not every][3:])) == {MOST_SPACING * PROBE_EVERY}


def test_a_busy_machine_turns_the_passes_to_one_core_and_an_idle_one_back():
    choice = CoreChoice()
    drive(choice, one_core=2.0, every_core=1.0, calls=4 * PROBE_EVERY)  # idle: every core twice as fast
    busy = drive(choice, one_core=2.2, every_core=4.0, calls=12 * PROBE_EVERY)  # busy: every core stalls
    assert 1 <= busy[-6 * PROBE_EVERY:].count(True) <= 6  # one core but for the probes
    assert busy.index(False) < 8  # the switch comes within a few calls
    idle = drive(choice, one_core=2.0, every_core=1.0, calls=16 * PROBE_EVERY)
    assert 1 <= idle[-6 * PROBE_EVERY:].count(False) <= 6  # every core again but for the probes


def test_one_stall_does_not_turn_the_choice():
    choice = CoreChoice()
    drive(choice, one_core=1.5, every_core=1.0, calls=3 * PROBE_EVERY)
    kernel = "row_sum"
    assert choice.every_core(kernel, CELLS)
    choice.record(kernel, CELLS, True, 100.0 * CELLS)  # descheduled once: counts as twice the average
    assert choice.every_core(kernel, CELLS)


def test_the_first_pass_of_each_compilation_is_not_counted():
    """It may load or compile the kernel: a slow first pass on every core must not send the rest to one."""
    choice = CoreChoice()
    kernel = "row_max"
    choice.record(kernel, CELLS, True, 1000.0 * CELLS)
    choice.record(kernel, CELLS, False, 1000.0 * CELLS)
    choice.record(kernel, CELLS, False, 2.0 * CELLS)
    assert choice.every_core(kernel, CELLS)


def test_sizes_and_kernels_are_timed_apart():
    choice = CoreChoice()
    small = drive(choice, one_core=1.0, every_core=3.0, calls=4 * PROBE_EVERY, cells=1 << 16)  # one core wins
    assert small[-PROBE_EVERY:].count(False) >= PROBE_EVERY - 1
    assert drive(choice, one_core=2.0, every_core=1.0, calls=PROBE_EVERY - 1, cells=1 << 20) == [True] * 31
    assert drive(choice, one_core=2.0, every_core=1.0, calls=PROBE_EVERY - 1, kernel="spread") == [True] * 31


class Scripted:
    """A choice that answers as told and keeps what it was told."""

    def __init__(self, answers: list[bool]) -> None:
        self.answers, self.records = answers, []

    def every_core(self, kernel: str, cells: int) -> bool:
        return self.answers.pop(0)

    def record(self, kernel: str, cells: int, every_core: bool, seconds: float) -> None:
        self.records.append((kernel, cells, every_core, seconds))


def test_run_calls_the_compilation_chosen_and_records_its_time(monkeypatch: pytest.MonkeyPatch):
    calls: list[str] = []
    compiled = kernels.Compiled("fake", lambda out: calls.append("one"), lambda out: calls.append("every"))
    choice = Scripted([False, True, False])
    monkeypatch.setattr(kernels, "_CORES", choice)
    monkeypatch.setattr(kernels, "_parts", lambda cells: 8)
    for _ in range(3):
        kernels._run(compiled, CELLS, None)
    assert calls == ["one", "every", "one"]
    assert [record[:3] for record in choice.records] == [("fake", CELLS, False), ("fake", CELLS, True),
                                                         ("fake", CELLS, False)]
    assert all(0 <= record[3] < 1 for record in choice.records)
    monkeypatch.setattr(kernels, "_parts", lambda cells: 1)  # a small table, or a single thread: not asked
    calls.clear()
    kernels._run(compiled, CELLS, None)
    assert calls == ["one"] and len(choice.records) == 3


def test_the_kernels_give_the_same_values_whichever_compilation_the_load_chooses(monkeypatch: pytest.MonkeyPatch):
    table = np.random.default_rng(3).normal(size=(64, 64, 64)) * 1e3
    monkeypatch.setattr(kernels._CORES, "every_core", lambda kernel, cells: True)
    every = kernels.sum_onto(table, (2, 0)), kernels.row_sum(table.reshape(64, -1))
    monkeypatch.setattr(kernels._CORES, "every_core", lambda kernel, cells: False)
    one = kernels.sum_onto(table, (2, 0)), kernels.row_sum(table.reshape(64, -1))
    for a, b in zip(every, one):
        np.testing.assert_array_equal(a, b)
