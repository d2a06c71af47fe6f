"""Bad command-line values give one clear line and a nonzero exit, never a traceback (issue: failure semantics)."""
from __future__ import annotations

from pathlib import Path

import pytest

from adr_core.cli_types import writable_dir
from adr_core.evaluation.cli import evaluate_main
from adr_core.export import main as export_main
from adr_core.report.cli import main as report_main
from adr_core.training.cli import main as train_main


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("kept")
    return path


def one_line_error(capsys: pytest.CaptureFixture, command, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        code = command(argv)
        raise SystemExit(code)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    return err[-1]


def test_train_refuses_a_negative_seed_and_iteration_count(tmp_path, capsys):
    assert one_line_error(capsys, train_main, ["--out", str(tmp_path / "x"), "--seed", "-1"]) == \
        "adr-train: error: seed must be in [0, 2**31 - 1], got -1"
    assert one_line_error(capsys, train_main, ["--out", str(tmp_path / "x"), "--max-iterations", "-3"]) == \
        "adr-train: error: argument --max-iterations: -3 is below 1"


def test_outputs_under_a_file_are_refused_and_the_file_kept(a_file, capsys):
    runs = a_file.parent
    assert one_line_error(capsys, report_main, [str(runs), "--out", str(a_file)]).endswith(
        f"argument --out: {a_file} is a file, not a directory")
    assert one_line_error(capsys, export_main, [str(runs), "--format", "onnx", "--out", str(a_file / "sub")]) == \
        f"adr-export: error: argument --out: {a_file / 'sub'}: {a_file} is a file, not a directory"
    assert one_line_error(capsys, train_main, ["--out", str(a_file / "run")]).endswith("is a file, not a directory")
    assert a_file.read_text() == "kept"


def test_evaluate_refuses_a_grid_without_points(tmp_path, capsys):
    assert one_line_error(capsys, evaluate_main, [str(tmp_path), "--points", "0"]).endswith(
        "argument --points: 0 is below 2")
    assert one_line_error(capsys, evaluate_main, [str(tmp_path / "missing")]).endswith(
        f"argument RUN: {tmp_path / 'missing'}: no such file or folder")


def test_writable_dir_accepts_new_folders(tmp_path):
    assert writable_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b"
