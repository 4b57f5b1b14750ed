"""The ported programs of python/examples/porting (nanoGPT-style train and sample, written with
`torch`'s imports and idioms, only backend.py choosing kael) run to the end on cpu and on the
cuda:0 device (emulated without a GPU), and the loss falls."""
import os
import subprocess
import sys

import pytest

import kael

HERE = os.path.dirname(os.path.abspath(__file__))
PORTING = os.path.join(HERE, "..", "examples", "porting")
TEXT = "/usr/share/common-licenses/GPL-3"  # base-files: on every Debian machine


def run(script, *arguments):
    result = subprocess.run([sys.executable, os.path.join(PORTING, script), *arguments],
                            capture_output=True, text=True, cwd=PORTING, timeout=600,
                            env={**os.environ, "KAEL_PORTING_BACKEND": "kael"})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


@pytest.mark.skipif(not os.path.exists(TEXT), reason="no text corpus")
@pytest.mark.parametrize("where", ["cpu", "cuda:0"])
def test_nanogpt_style_program_trains_checkpoints_and_samples(where, tmp_path):
    device = where
    if not kael.is_available(device):
        pytest.skip(f"nothing serves {device}")
    log = tmp_path / "loss.txt"
    out = run("train_char_gpt.py", f"--device={device}", f"--out_dir={tmp_path}",
              "--max_iters=30", "--eval_interval=15", "--eval_iters=2", f"--log_path={log}",
              "--dtype=float16" if device != "cpu" else "--dtype=bfloat16")
    assert "saving checkpoint" in out
    losses = [float(line.split()[1]) for line in log.read_text().splitlines()]
    assert len(losses) == 30 and sum(losses[-5:]) / 5 < losses[0] - 0.3, losses
    sample = run("sample_char_gpt.py", f"--device={device}", f"--out_dir={tmp_path}",
                 "--max_new_tokens=40", "--num_samples=1")
    assert sample.count("---------------") == 1 and len(sample) > 40


@pytest.mark.skipif(not os.path.exists(TEXT), reason="no text corpus")
@pytest.mark.skipif(not kael.distributed.is_gloo_available(), reason="this kael has no gloo")
def test_nanogpt_style_program_under_kael_run_trains_as_one_process(tmp_path):
    """kael-run --standalone --nproc_per_node=2 with two micro-steps: DDP over gloo, each
    process one micro-step of every global batch; the loss curve is the single process's with
    both micro-steps (the same global batches)."""
    settings = ["--device=cpu", "--max_iters=5", "--eval_interval=5", "--eval_iters=1",
                "--gradient_accumulation_steps=2", "--dtype=float32"]
    run("train_char_gpt.py", f"--out_dir={tmp_path / 'one'}", f"--log_path={tmp_path / 'one.txt'}",
        *settings)
    launched = subprocess.run(
        [sys.executable, "-m", "kael.distributed.run", "--standalone", "--nproc_per_node=2",
         os.path.join(PORTING, "train_char_gpt.py"), f"--out_dir={tmp_path / 'two'}",
         f"--log_path={tmp_path / 'two.txt'}", *settings],
        capture_output=True, text=True, cwd=PORTING, timeout=600,
        env={**os.environ, "KAEL_PORTING_BACKEND": "kael"})
    assert launched.returncode == 0, launched.stderr[-3000:]
    curves = [[float(line.split()[1]) for line in (tmp_path / name).read_text().splitlines()]
              for name in ("one.txt", "two.txt")]
    assert len(curves[0]) == len(curves[1]) == 5
    for single, parallel in zip(*curves):
        assert abs(single - parallel) <= 1e-5 * abs(single), curves
    assert (tmp_path / "two" / "ckpt.pt").exists()  # the master's checkpoint


@pytest.mark.skipif(not os.path.exists(TEXT), reason="no text corpus")
@pytest.mark.parametrize("where", ["cpu", "cuda:0"])
def test_mingpt_style_trainer_runs_its_endless_sampler_and_saves(where, tmp_path):
    if not kael.is_available(where):
        pytest.skip(f"nothing serves {where}")
    log = tmp_path / "loss.txt"
    run("mingpt_style_trainer.py", f"--device={where}", "--max_iters=40",
        f"--log_path={log}", f"--out_path={tmp_path / 'model.pt'}")
    losses = [float(line.split()[1]) for line in log.read_text().splitlines()]
    assert len(losses) == 40 and sum(losses[-5:]) / 5 < losses[0] - 0.5, losses
    state = kael.load(str(tmp_path / "model.pt"))
    assert "lm_head.weight" in state
