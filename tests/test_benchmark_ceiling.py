"""benchmarks.ceiling: the speed-up of independent processes, and its table."""

import pytest

from benchmarks import ceiling


def test_speed_up_sums_each_process_rate_over_the_mean_single_process():
    # one process alone took 2 s and 4 s (mean 3 s); four together took 3, 3, 6 and 6 s
    assert ceiling.speed_up([2.0, 4.0], [3.0, 3.0, 6.0, 6.0]) == pytest.approx(3.0)


def test_print_ceiling_gives_cpu_per_process_and_the_speed_up(capsys):
    singles = [ceiling.Round([1.0], [1.0]), ceiling.Round([1.0], [1.0])]
    rounds = {4: ceiling.Round([1.0, 1.2, 1.4, 1.6], [1.0, 1.25, 1.25, 2.0])}
    ceiling.print_ceiling("spin", singles, rounds)
    assert capsys.readouterr().out.splitlines() == [
        "",
        "`spin`: one process alone, before and after: 1.00 s, 1.00 s",
        "",
        "| processes | CPU per process: mean (min–max) | over one alone | speed-up over one "
        "| per process |",
        "| ---: | ---: | ---: | ---: | ---: |",
        "| 1 | 1.00 s | 1.00× | 1.0× | 100% |",
        "| 4 | 1.30 s (1.00–1.60) | 1.30× | 3.1× | 78% |",
    ]


def test_a_round_runs_its_processes_and_reads_their_seconds(tmp_path):
    run = ceiling.run_round("spin", 2, tmp_path / "unused.jsonl")
    assert len(run.cpu) == len(run.wall) == 2
    assert all(0 < seconds < 60 for seconds in run.cpu + run.wall)
