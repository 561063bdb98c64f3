"""Arguments, data errors and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from trainer_testlib import load_final, run_cli, tiny_args

from trainer import exit_codes
from trainer.cli import main
from trainer.launch import final_code


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--batch-size=0"], "--batch-size: must be a positive integer, got 0"),
        (["--model=vgg"], "invalid choice: 'vgg'"),
        (["--precision=fp8"], "--precision: invalid choice"),
        (["--max-steps=many"], "--max-steps: invalid"),
        (["--data-dir=/nonexistent/images"], "is not a directory"),
        (["--checkpoint-uri=cosn://bucket/run"], "https://cos.<region>.myqcloud.com"),
        (["--checkpoint-uri=oss://bucket/run"], "STORAGE_ENDPOINT_URL (e.g. https://s3.oss-"),
        (["--checkpoint-uri=tos://bucket/run"], "(e.g. https://tos-s3-<region>.ivolces.com)"),
        (["--checkpoint-uri=gs://bucket/run"], "unsupported --checkpoint-uri scheme gs://"),
        (["--checkpoint-uri=s3://AKIA:secret@bucket/run"], "credentials in --checkpoint-uri"),
        (["--synthetic-samples=4", "--batch-size=8"], "no full global batch of 8"),
        (["--global-batch-size=12"], "--global-batch-size 12 is not a multiple of --batch-size 8"),
        (["--sharding=fsdp", "--checkpoint-format=file"], "--sharding fsdp needs"),
        (["--sharding=fsdp", "--model=resnet18"], "BatchNorm statistics"),
        (["--sharding=zero3"], "--sharding: invalid choice"),
        (["--model=gpt", "--gpt-dim=30", "--gpt-heads=4"], "--gpt-dim 30 is not a multiple"),
        (["--export-dtype=int8"], "--export-dtype: invalid choice"),
    ],
)
def test_bad_arguments_exit_non_retryable_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    code = main(tiny_args(str(tmp_path / "run"), steps=2)[:-1] + args)
    err = capsys.readouterr().err
    assert code == exit_codes.USER_ERROR
    lines = [ln for ln in err.splitlines() if ln.startswith("trainer: error:")]
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err


def test_bad_argument_in_a_real_process() -> None:
    proc = run_cli("--lr=-1")
    assert proc.returncode == exit_codes.USER_ERROR == 64
    assert proc.stderr.strip() == "trainer: error: argument --lr: must be > 0, got -1"
    assert proc.stdout == ""


def test_checkpoint_of_another_model_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(tmp_path / "run")
    assert main(tiny_args(root, steps=2)) == 0
    capsys.readouterr()
    args = [a for a in tiny_args(root, steps=4) if not a.startswith("--image-size")]
    assert main([*args, "--image-size=16"]) == exit_codes.USER_ERROR
    assert "image_size=12" in capsys.readouterr().err


def test_image_folder_data(tmp_path: Path) -> None:
    from PIL import Image

    data = tmp_path / "images"
    g = torch.Generator().manual_seed(0)
    for cls in ("cat", "dog", "eel"):
        (data / cls).mkdir(parents=True)
        for i in range(6):
            pixels = torch.randint(0, 256, (20, 20, 3), generator=g, dtype=torch.uint8)
            Image.fromarray(pixels.numpy()).save(data / cls / f"{i}.png")
    (data / "dog" / "notes.txt").write_text("ignored")
    root = str(tmp_path / "run")
    args = [a for a in tiny_args(root, steps=4) if not a.startswith("--synthetic")]
    assert main([*args, f"--data-dir={data}"]) == 0
    assert load_final(root)["fc2.weight"].shape == (3, 128)  # three classes found

    (data / "eel" / "5.png").write_bytes(b"broken")
    assert main([*args, f"--data-dir={data}", "--no-resume"]) == exit_codes.USER_ERROR
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([*args, f"--data-dir={empty}"]) == exit_codes.USER_ERROR


def test_exit_code_combination() -> None:
    assert exit_codes.combine([0, 0]) == 0
    assert exit_codes.combine([75, 75]) == 75
    assert exit_codes.combine([75, 0]) == 75
    assert exit_codes.combine([75, 1]) == 1  # a crash is not a preemption
    assert exit_codes.combine([1, 64, 75]) == 64
    assert final_code(1, [75, 75], 2) == 75  # torchrun says 1, workers say preempted
    assert final_code(1, [75], 2) == 1  # a worker vanished without recording
    assert final_code(-9, [], None) == 137
    assert exit_codes.PREEMPTED in exit_codes.RETRYABLE
    assert exit_codes.USER_ERROR in exit_codes.NON_RETRYABLE
    assert len({exit_codes.OK, exit_codes.UNEXPECTED_ERROR, 2, 64, 75, 137, 143}) == 7


def test_model_names_agree() -> None:
    from trainer.config import MODELS
    from trainer.models import SPECS

    assert tuple(sorted([*SPECS, "gpt"])) == MODELS


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--checkpoint-every-seconds" in out and "--async-checkpoint" in out


def test_exit_code_table_lists_every_code_inside_its_columns() -> None:
    """The docstring's reStructuredText table: each code and name within its column (a name
    that runs into the next column breaks the table), every code of NAMES listed."""
    doc = exit_codes.__doc__ or ""
    border = next(ln for ln in doc.splitlines() if ln.startswith("====="))
    widths = [len(col) for col in border.split()]
    starts = [border.index(col, sum(widths[:i]) + 2 * i) for i, col in enumerate(border.split())]
    rows = [ln for ln in doc.splitlines() if ln[:1].isdigit()]
    listed = {}
    for row in rows:
        code, name = row[: starts[1]].strip(), row[starts[1] : starts[2]].strip()
        assert row[starts[2] - 2 : starts[2]] == "  ", f"name runs into the meaning: {row!r}"
        assert len(name) <= widths[1] and code.isdigit(), row
        listed[int(code)] = name.strip("`")
    assert listed == exit_codes.NAMES


def test_gpt_parameter_count_of_the_1b_benchmark_model() -> None:
    """GPTShape.params() is the decoder's real parameter count; the GPU check's model (built
    on the meta device here: no memory) has at least 1 B parameters."""
    from trainer.bench.benchmark import GPT_SIZES
    from trainer.models import GPT, GPTShape

    for layers, dim, heads, vocab, seq, _ in GPT_SIZES.values():
        shape = GPTShape(vocab, seq, layers, dim, heads)
        with torch.device("meta"):
            model = GPT(shape)
        assert shape.params() == sum(p.numel() for p in model.parameters())
    layers, dim, heads, vocab, seq, _ = GPT_SIZES["1b"]
    assert GPTShape(vocab, seq, layers, dim, heads).params() >= 1_000_000_000
