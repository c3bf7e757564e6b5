"""The commands' use of Python's cycle collector: fewer collections during a batch job, none of
the command's objects walked at exit, and everything as before once the job is done."""

from __future__ import annotations

import gc
import subprocess
import sys

from lineage_es.collector import BATCH_YOUNG_THRESHOLD, fewer_collections
from lineage_es.importers.forked import in_order


def test_a_batch_job_collects_its_young_objects_less_often_then_as_before() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == (BATCH_YOUNG_THRESHOLD, *before[1:])
    assert gc.get_threshold() == before


def test_what_existed_before_a_batch_job_is_left_out_of_its_collections() -> None:
    frozen_before = gc.get_freeze_count()
    with fewer_collections():
        assert gc.get_freeze_count() > frozen_before
    assert gc.get_freeze_count() == frozen_before


def test_forked_readers_inside_a_batch_job_leave_its_freeze_in_place() -> None:
    with fewer_collections():
        frozen = gc.get_freeze_count()
        assert list(in_order(lambda task: task, [1, 1, 1], 2)) == [0, 1, 2]
        assert gc.get_freeze_count() >= frozen


def test_the_other_exit_handlers_still_run_when_collections_at_exit_are_skipped() -> None:
    code = (
        "import atexit\n"
        "from lineage_es.collector import skip_collections_at_exit\n"
        "skip_collections_at_exit()\n"
        "atexit.register(print, 'handler ran')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (0, "handler ran\n")
