"""A process that answers queries runs numpy's BLAS on one thread: its idle threads spin after each small product."""
import json
import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def test_a_recommender_leaves_numpy_one_blas_thread_and_still_answers(small_index):
    script = ("import json; from threadpoolctl import threadpool_info;"
              "from recommender.pipeline.recommender import Recommender; from recommender.query import Query;"
              "blas = lambda: [i['num_threads'] for i in threadpool_info() if i['user_api'] == 'blas'];"
              f"before = blas(); r = Recommender.load({str(small_index)!r});"
              "found = r.recommend(Query(title='citation recommendation')).recommendations;"
              "print(json.dumps([before, blas(), len(found) > 0]))")
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "OPENBLAS_NUM_THREADS": "2"})
    assert done.returncode == 0, done.stderr[-2000:]
    before, after, answered = json.loads(done.stdout.strip().splitlines()[-1])
    assert before and all(n == 2 for n in before)  # the environment asked for two
    assert after == [1] * len(before) and answered
