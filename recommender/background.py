"""Long builds in the background: `python -m recommender` commands run one after the other in a process of
their own, detached from whoever started them (a web app session, a terminal), with their state in a folder.

The job folder holds:
- `job.json`: what to run: the job's name and its steps, each a `python -m recommender` command line;
- `status.json`: where it is: its state, the step running, that step's progress (the command's progress bar,
  read from its output), the reason it failed;
- `log.txt`: everything the commands printed;
- `lock`: locked (flock) while the job's process lives. The system releases the lock when the process ends
  however it ends, so a job whose status says "running" but whose lock is free was killed: it is "interrupted";
- `pid`: the job's process; `stop`: there while a stop was asked for (so that a job stopped before it could
  say so is "stopped", not "interrupted").

`Job.start()` runs a job, or resumes one that was interrupted, stopped or failed: the steps that finished
are skipped (a step may name the file it `creates`, written whole at its end), and the commands resume
themselves (downloads from their `.partial` file, index builds from the embedding cache). A job that runs
cannot be started twice. Needs a POSIX system (Linux, macOS): the lock is handed to the job's process.

Run as `python -m recommender.background run FOLDER --lock-fd N` (by `Job.start`), whose steps run as
`python -m recommender.background step -- ARGS...`: `python -m recommender ARGS...` with its progress bars
drawn although its output is not a terminal.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # the folder `python -m recommender` runs from
STATUS_EVERY_S = 0.5  # progress is written at most this often
KEEP_ALIVE_EVERY_S = 60.0  # the job's `touch` paths get a fresh modification time this often
LOG_TAIL_BYTES = 64 * 1024
STOP_REPEAT_S = 2.0  # a stopped step that still runs is interrupted again this often
_BAR_RE = re.compile(r"^(?P<desc>[^\r\n]*):\s*(?:(?P<percent>\d{1,3})%\|[^|]*\|)?\s*(?P<counts>[^\[\]]*?)\s*"
                     r"\[\d+:\d\d[^\]]*\]\s*$")  # tqdm: "desc: 45%|####  | 460/1024 [00:09<00:11, 49.1doc/s]"


class JobBusy(RuntimeError):
    """The job is running already."""


@dataclass
class Step:
    """One command of a job: `python -m recommender` with `argv`; `creates`: the file it writes at its end."""

    label: str
    argv: list[str]
    creates: str = ""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _write_json(path: Path, value: Any) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    temporary.write_text(json.dumps(value, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(temporary, path)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def parse_progress(line: str) -> dict[str, Any] | None:
    """A tqdm progress line as {"text", "fraction"} (fraction None without a total); None for other lines."""
    match = _BAR_RE.match(line.strip())
    if not match or not match.group("desc").strip():
        return None
    percent = match.group("percent")
    counts = " ".join(match.group("counts").split())
    text = f"{match.group('desc').strip()}: " + " · ".join(
        part for part in (f"{percent}%" if percent else "", counts) if part)
    return {"text": text, "fraction": min(int(percent), 100) / 100 if percent else None}


class Job:
    """A background job in its folder; the page or command that started it may be gone."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    @classmethod
    def create(cls, folder: str | Path, name: str, steps: list[Step], *, touch: list[str] | None = None,
               temporary: list[str] | None = None, info: dict[str, Any] | None = None) -> "Job":
        """A new job in `folder` (which must not exist: one job per folder). `touch`: paths kept fresh while the job
        runs (so that a clean-up of idle folders spares them); `temporary`: files removed once the job is done."""
        folder = Path(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir()  # FileExistsError when a job is there: the caller says what to do about it
        job = cls(folder)
        _write_json(job.spec_path, {"name": name, "steps": [asdict(s) for s in steps], "touch": touch or [],
                                    "temporary": temporary or [], "info": info or {}, "created": _now()})
        _write_json(job.status_path, {"state": "created", "updated": _now()})
        return job

    # ------------------------------------------------------------------ the files

    @property
    def spec_path(self) -> Path:
        return self.folder / "job.json"

    @property
    def status_path(self) -> Path:
        return self.folder / "status.json"

    @property
    def log_path(self) -> Path:
        return self.folder / "log.txt"

    @property
    def lock_path(self) -> Path:
        return self.folder / "lock"

    @property
    def stop_path(self) -> Path:
        return self.folder / "stop"

    def pid(self) -> int | None:
        """The process of the job's last run (it may have ended)."""
        try:
            return int((self.folder / "pid").read_text(encoding="ascii"))
        except (OSError, ValueError):
            return None

    def spec(self) -> dict[str, Any]:
        return _read_json(self.spec_path)

    @property
    def name(self) -> str:
        return str(self.spec().get("name") or self.folder.name)

    def steps(self) -> list[Step]:
        return [Step(**s) for s in self.spec().get("steps", [])]

    # ------------------------------------------------------------------ what others see

    def running(self) -> bool:
        """Whether a process of this job holds its lock."""
        import fcntl

        try:
            fd = os.open(self.lock_path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)  # closing also releases a lock this call took
        return False

    def status(self) -> dict[str, Any]:
        """status.json, with `state` as it really is: "running" only while the job's process lives."""
        status = _read_json(self.status_path)
        state = status.get("state", "created")
        if self.running():
            status["state"] = "running"
        elif state in ("starting", "running"):
            status["state"] = "stopped" if self.stop_path.exists() else "interrupted"
        return status

    def state(self) -> str:
        return self.status()["state"]

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the log."""
        try:
            with self.log_path.open("rb") as handle:
                handle.seek(max(0, handle.seek(0, os.SEEK_END) - LOG_TAIL_BYTES))
                text = handle.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    # ------------------------------------------------------------------ control

    def start(self) -> None:
        """Run the job (or resume it) in a detached process; JobBusy when it runs already."""
        import fcntl

        before = self.state()
        if before == "done":
            raise ValueError(f"the job {self.name} is done; there is nothing to resume")
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise JobBusy(f"the job {self.name} is running already") from None
            self.stop_path.unlink(missing_ok=True)
            _write_json(self.status_path, {**_read_json(self.status_path), "state": "starting", "message": "",
                                           "updated": _now()})
            with self.log_path.open("a", encoding="utf-8") as log:
                if before == "interrupted":
                    log.write("--- the run before ended without a word (killed?)\n")
                log.write(f"--- {_now()} started\n")
                log.flush()
                process = subprocess.Popen([sys.executable, "-m", "recommender.background", "run", str(self.folder),
                                            "--lock-fd", str(fd)], cwd=PACKAGE_ROOT, stdin=subprocess.DEVNULL,
                                           stdout=log, stderr=subprocess.STDOUT, pass_fds=(fd,),
                                           start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
            (self.folder / "pid").write_text(str(process.pid), encoding="ascii")
            threading.Thread(target=process.wait, daemon=True).start()  # reaped when it ends: no zombie
        finally:
            os.close(fd)  # the job's process holds the lock from here on

    def stop(self) -> bool:
        """Ask the running job to stop (its command is interrupted as by Ctrl-C); False when it was not running."""
        pid = self.pid()
        if not self.running() or pid is None:
            return False
        self.stop_path.touch()
        try:
            os.kill(pid, signal.SIGTERM)  # before the job's process is ready to be asked, this ends it at once
        except ProcessLookupError:
            return False
        return True

    def remove(self) -> None:
        """Delete the job's folder (with what it downloaded); refused while the job runs."""
        if self.running():
            raise JobBusy(f"the job {self.name} is running; stop it first")
        shutil.rmtree(self.folder)


# ---------------------------------------------------------------------------------------------- the job process


class _Runner:
    """The job's process: runs the steps in order and keeps status.json and log.txt up to date."""

    def __init__(self, job: Job, lock_fd: int):
        self.job, self.lock_fd = job, lock_fd
        self.spec = job.spec()
        self.status = {**_read_json(job.status_path), "state": "running", "message": "",
                       "started": _now(), "finished": None}
        self.child: subprocess.Popen | None = None
        self.stopping = False
        self.last_write = 0.0
        self.log = job.log_path.open("a", encoding="utf-8")

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        threading.Thread(target=self._keep_alive, daemon=True).start()
        steps = self.job.steps()
        self._write(force=True)
        if self.job.stop_path.exists():  # asked to stop while it started
            return self._end("stopped", "Stopped; start it again to continue.")
        for number, step in enumerate(steps, start=1):
            self.status.update(step=number, steps=len(steps), label=step.label, progress=None)
            if step.creates and Path(step.creates).is_file():
                self._log(f"step {number} of {len(steps)} ({step.label}): done before, skipped")
                continue
            self._log(f"step {number} of {len(steps)} ({step.label}): python -m recommender {' '.join(step.argv)}")
            self._write(force=True)
            code = self._run_step(step)
            if self.stopping:
                return self._end("stopped", "Stopped; start it again to continue.")
            if code != 0:
                return self._end("failed", self._failure(code))
        for path in self.spec.get("temporary", []):
            Path(path).unlink(missing_ok=True)
        return self._end("done", "")

    def _run_step(self, step: Step) -> int:
        self.child = subprocess.Popen([sys.executable, "-m", "recommender.background", "step", "--", *step.argv],
                                      cwd=PACKAGE_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, pass_fds=(self.lock_fd,),
                                      env={**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "100"})
        if self.stopping:  # a stop that came while the step started
            self._interrupt()
        pending = b""
        assert self.child.stdout is not None
        while chunk := self.child.stdout.read1(65536):
            pending += chunk
            *pieces, pending = re.split(rb"(\r\n|\r|\n)", pending)
            for text, end in zip(pieces[0::2], pieces[1::2]):
                self._output(text.decode("utf-8", "replace"), final=end != b"\r")
        if pending:
            self._output(pending.decode("utf-8", "replace"), final=True)
        return self.child.wait()

    def _output(self, line: str, final: bool) -> None:
        """One line of a command's output: a progress bar updates the status; finished lines go to the log."""
        progress = parse_progress(line)
        if progress is not None:
            self.status["progress"] = progress
            self._write(force=final)
        if final and line.strip():
            self.log.write(line.rstrip() + "\n")
            self.log.flush()

    def _failure(self, code: int) -> str:
        """Why a step failed, for people: its last error line, else its exit status."""
        tail = self.job.log_tail(60).splitlines()
        starts = [i for i, line in enumerate(tail) if line.startswith("--- step ")]
        lines = [line for line in tail[starts[-1] + 1 if starts else 0:] if line.strip()]  # this step's output
        errors = [line for line in lines if line.startswith("error:")]
        if errors:
            return errors[-1][len("error:"):].strip()
        if code < 0:
            return (f"the command was killed by signal {-code}"
                    + (" (out of memory?)" if -code == signal.SIGKILL else ""))
        return lines[-1] if lines else f"the command ended with exit status {code}"

    def _on_stop(self, signum, frame) -> None:
        self.stopping = True
        if self.child is not None:
            self._interrupt()

    def _interrupt(self) -> None:
        """Interrupt the running step as Ctrl-C does (the command cleans up and keeps what it can), and again every
        STOP_REPEAT_S while it runs: Python drops an interrupt that arrives while it imports a module."""
        child = self.child

        def insist() -> None:
            while child.poll() is None:
                child.send_signal(signal.SIGINT)
                time.sleep(STOP_REPEAT_S)

        threading.Thread(target=insist, daemon=True).start()

    def _keep_alive(self) -> None:
        while True:
            for path in self.spec.get("touch", []):
                try:
                    os.utime(path)
                except OSError:
                    pass
            time.sleep(KEEP_ALIVE_EVERY_S)

    def _log(self, line: str) -> None:
        self.log.write(f"--- {line}\n")
        self.log.flush()

    def _write(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self.last_write >= STATUS_EVERY_S:
            self.last_write = now
            _write_json(self.job.status_path, {**self.status, "updated": _now()})

    def _end(self, state: str, message: str) -> int:
        self.status.update(state=state, message=message, finished=_now())
        self._write(force=True)
        self._log(f"{state}{': ' + message if message else ''}")
        return 0 if state == "done" else 1


class _Terminal:
    """A text stream that says it is a terminal, so that the command draws its progress bars into a pipe."""

    def __init__(self, stream):
        self.stream = stream

    def isatty(self) -> bool:
        return True

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["step", "--"]:
        from recommender.cli import main as command

        sys.stderr = sys.stdout = _Terminal(sys.stdout)
        return command(argv[2:])
    if len(argv) == 4 and argv[0] == "run" and argv[2] == "--lock-fd":
        return _Runner(Job(argv[1]), int(argv[3])).run()
    print("usage: python -m recommender.background run FOLDER --lock-fd N | step -- ARGS...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
