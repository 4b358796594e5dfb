"""tb_events.py — checks recordio-train's TensorBoard event file against
its --metrics file, read one of two ways:

  tb_events.py ours CAT DIR METRICS EVERY   with recordio-cat -f json (our
                                            Event decoder, event_decode.c)
  tb_events.py tensorboard DIR METRICS EVERY  with TensorBoard's own
                                            EventAccumulator; exit 77 when
                                            tensorboard is not installed

Expects one events.out.tfevents.<seconds>.<host> file in DIR: the
"brain.Event:2" header first, each epoch's scalars at the global step that
ends it equal to the metrics line of that epoch (its 6 digits), and
train/step_loss at every EVERY-th step. Prints what it checked; exit 1
with the first difference.
"""
import glob
import json
import math
import os
import re
import subprocess
import sys
import types

EPOCH_TAGS = {"train/loss": "train_loss", "train/accuracy": "train_accuracy",
              "test/loss": "test_loss", "test/accuracy": "test_accuracy",
              "train/learning_rate": "lr", "perf/samples_per_s": "samples_per_s",
              "perf/data_wait_fraction": "data_wait_fraction"}


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def read_ours(cat, path):
    out = subprocess.run([cat, "-f", "json", path], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"recordio-cat {path}: exit {out.returncode}: {out.stderr.strip()}")
    events = [json.loads(line) for line in out.stdout.splitlines()]
    if not events or events[0].get("file_version") != "brain.Event:2":
        fail("the first event is not the brain.Event:2 header")
    scalars = {}
    for ev in events[1:]:
        if ev.get("_type") != "Event" or "summary" not in ev:
            fail(f"not a summary event: {ev}")
        for v in ev["summary"]:
            scalars.setdefault(v["tag"], []).append((ev["step"], v["value"]))
    return scalars


def read_tensorboard(directory):
    try:
        # TensorBoard's own reader without importing TensorFlow (its stub)
        sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("notf"))
        from tensorboard.backend.event_processing import event_accumulator
    except ImportError:
        print(f"SKIP: {sys.executable} cannot import tensorboard: pip install tensorboard "
              "(scripts/test.sh puts it in build-python/venv, first on PATH)")
        sys.exit(77)
    acc = event_accumulator.EventAccumulator(directory, size_guidance={"scalars": 0})
    acc.Reload()
    if acc.file_version != 2.0:  # it keeps the number after "brain.Event:"
        fail(f"TensorBoard read file_version {acc.file_version!r}")
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)]
            for tag in acc.Tags()["scalars"]}


def main():
    mode = sys.argv[1]
    if mode == "ours":
        cat, directory, metrics, every = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    else:
        directory, metrics, every = sys.argv[2], sys.argv[3], int(sys.argv[4])
    files = glob.glob(os.path.join(directory, "*"))
    if len(files) != 1 or not re.fullmatch(r"events\.out\.tfevents\.\d+\.[^/]+",
                                           os.path.basename(files[0])):
        fail(f"want one events.out.tfevents.<time>.<host> file in {directory}: {files}")
    scalars = read_ours(cat, files[0]) if mode == "ours" else read_tensorboard(directory)
    epochs = [json.loads(line) for line in open(metrics)]
    step = 0
    for tag, key in EPOCH_TAGS.items():
        got = scalars.get(tag, [])
        if len(got) != len(epochs):
            fail(f"{tag}: {len(got)} values for {len(epochs)} epochs")
    for i, e in enumerate(epochs):
        step += e["steps"]
        for tag, key in EPOCH_TAGS.items():
            s, v = scalars[tag][i]
            want = e[key]
            if s != step or not math.isclose(v, want, rel_tol=1e-5, abs_tol=1e-6):
                fail(f"epoch {i + 1} {tag}: step {s} value {v}, want step {step} value {want}")
    losses = scalars.get("train/step_loss", [])
    want_steps = list(range(every, step + 1, every))
    if [s for s, _ in losses] != want_steps:
        fail(f"train/step_loss at steps {[s for s, _ in losses]}, want {want_steps}")
    if not all(math.isfinite(v) and v > 0 for _, v in losses):
        fail(f"train/step_loss values {losses}")
    print(f"{mode}: {len(epochs)} epochs x {len(EPOCH_TAGS)} scalars and "
          f"{len(losses)} step losses match the metrics")


main()
