"""benchmarks.scale's sweep: the slope that leaves start-up out, and its table."""

import pytest

from benchmarks import scale


def _fake_batch(times: dict[tuple[int, int], tuple], outputs: dict[int, bytes]):
    """A run_batch that returns `times[(rows, workers)]` (wall, CPU and the driver's CPU
    seconds) and writes `outputs[workers]`."""

    def run_batch(source, target, workers, env=None, model=None):
        rows = source.read_bytes().count(b"\n")
        target.write_bytes(outputs[workers])
        return times[(rows, workers)]

    return run_batch


def test_sweep_takes_the_slope_between_the_whole_input_and_its_first_quarter(tmp_path, monkeypatch):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"".join(b'{"id": %d}\n' % i for i in range(400)))
    # one worker: 1 s once, 10 ms a row, all of it the driver's CPU; two: 2 s once, 4 ms a row
    # of wall clock, 12 ms of CPU a row of which the driver 0.5 ms
    times = {
        (400, 1): (5.0, 5.0, 5.0),
        (100, 1): (2.0, 2.0, 2.0),
        (400, 2): (3.6, 6.0, 0.4),
        (100, 2): (2.4, 2.4, 0.25),
    }
    monkeypatch.setattr(scale, "run_batch", _fake_batch(times, {1: b"rows", 2: b"rows"}))
    best = scale.sweep(source, tmp_path, [1, 2], repeat=2)
    assert best == {
        1: scale.SweepPoint(5.0, pytest.approx(0.01), pytest.approx(0.01), pytest.approx(0.01)),
        2: scale.SweepPoint(3.6, pytest.approx(0.004), pytest.approx(0.012), pytest.approx(0.0005)),
    }
    first_quarter = b"".join(source.read_bytes().splitlines(keepends=True)[:100])
    assert (tmp_path / "sweep-quarter.jsonl").read_bytes() == first_quarter


def test_sweep_refuses_a_run_whose_rows_differ_from_the_first(tmp_path, monkeypatch):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b"{}\n" * 8)
    times = {(8, 1): (1.0, 1.0, 1.0), (2, 1): (0.5, 0.5, 0.5)}
    times |= {(8, 2): (1.0, 1.0, 0.1), (2, 2): (0.5, 0.5, 0.1)}
    monkeypatch.setattr(scale, "run_batch", _fake_batch(times, {1: b"a", 2: b"b"}))
    with pytest.raises(SystemExit, match="batch --workers 2 wrote other rows than the first run"):
        scale.sweep(source, tmp_path, [1, 2], repeat=1)


def test_print_sweep_gives_the_whole_run_and_the_per_row_rate_over_one_worker(capsys):
    best = {
        1: scale.SweepPoint(10.0, 0.008, 0.008, 0.008),
        4: scale.SweepPoint(3.0, 0.0025, 0.0104, 0.00007),
    }
    scale.print_sweep("title", 1000, best, loop=9.0)
    assert capsys.readouterr().out.splitlines()[1:] == [
        "title",
        "",
        "| workers | wall | rows/s | speed-up over 1 worker | per row, start-up left out: rows/s "
        "| speed-up | per worker | whole process vs the loop | CPU per row: every process "
        "(of it the driver) | CPU per row over 1 worker's |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        "| 1 | 10.00 s | 100 | 1.0× | 125 | 1.0× | 100% | 0.90 | 8000 µs (8000.0 µs) | 1.00× |",
        "| 4 | 3.00 s | 333 | 3.3× | 400 | 3.2× | 80% | 3.00 | 10400 µs (70.0 µs) | 1.30× |",
    ]


def test_a_sweep_point_keeps_the_best_of_each_figure_across_rounds():
    first, second = scale.SweepPoint(1.0, 5.0, 3.0, 2.0), scale.SweepPoint(2.0, 4.0, 4.0, 1.0)
    assert first.best_with(second) == scale.SweepPoint(1.0, 4.0, 3.0, 1.0)
