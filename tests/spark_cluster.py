"""A Spark standalone cluster on this machine, for the tests: one master and some workers, each its
own OS process started with ``spark-class`` from the installed pyspark, bound to 127.0.0.1 on ports
free at start, with small workers (one core, 1 GB for its executors). The workers launch the
executors of an application as their own child processes.

It must never leave a JVM behind: each daemon starts in its own process group (its executors join
it), and ``stop`` ends every group, first asking, then killing, and waits until none is left. This
is a helper for the tests, not a test module: it holds no test.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

REQUIRE = "SYNTH_REQUIRE_SPARK_CLUSTER"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
DAEMON_MEMORY = "512m"  # the master's and each worker's own heap (not the executors')
STARTUP_SECONDS = 180  # a loaded 2-core machine starts three JVMs slowly
STOP_SECONDS = 20


def cluster_required() -> bool:
    """Whether a missing pyspark or Java must fail the cluster test rather than skip it: under CI
    (``CI`` set to anything but empty, 0 or false) or with ``SYNTH_REQUIRE_SPARK_CLUSTER=1``."""
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return ci or os.environ.get(REQUIRE, "").strip() == "1"


def spark_home() -> Path | str:
    """The installed pyspark's folder (it holds ``bin/spark-class`` and Spark's jars), or a sentence
    saying what is missing."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return "the Spark cluster test needs pyspark (pip install 'synth[spark]'), which is not installed"
    home = Path(spec.origin).parent
    if not (home / "bin" / "spark-class").is_file():
        return f"the installed pyspark at {home} has no bin/spark-class to start a master and workers with"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "the Spark cluster test needs Java 17 (java on the PATH, or JAVA_HOME), which is missing"
    return home


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def read_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is still running (a zombie awaiting its parent is not)."""
    listed = subprocess.run(["ps", "-eo", "pgid=,stat="], capture_output=True, text=True, check=True).stdout
    return any(int(fields[0]) == pgid and not fields[1].startswith("Z")
               for fields in (line.split() for line in listed.splitlines()) if len(fields) == 2)


class StandaloneCluster:
    """A master and ``workers`` workers under ``folder`` (their logs and the executors' work folders)."""

    def __init__(self, home: Path, folder: Path, workers: int = 2) -> None:
        self.home = home
        self.folder = folder
        self.port = free_port()
        self.web_port = free_port()
        self.worker_web_ports = [free_port() for _ in range(workers)]
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        conf = folder / "conf"  # empty: no spark-defaults.conf or spark-env.sh of this machine applies
        conf.mkdir(parents=True, exist_ok=True)
        self.env = {**os.environ, "SPARK_HOME": str(home), "SPARK_CONF_DIR": str(conf), "SPARK_LOCAL_IP": "127.0.0.1",
                    "SPARK_DAEMON_MEMORY": DAEMON_MEMORY, "SPARK_LOG_DIR": str(folder / "logs")}
        for name in ("MASTER", "SPARK_REMOTE", "SPARK_MASTER_OPTS", "SPARK_WORKER_OPTS"):
            self.env.pop(name, None)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}/json/"

    def worker_dir(self, i: int) -> Path:
        return self.folder / f"worker{i}"

    def worker_state(self, i: int) -> Any:
        """Worker ``i``'s own JSON state: its running and finished executors."""
        return read_json(f"http://127.0.0.1:{self.worker_web_ports[i]}/json/")

    def state(self) -> Any:
        """The master's JSON state: workers, running and completed applications."""
        return read_json(self.web_url)

    def _spawn(self, name: str, *args: str) -> None:
        with open(self.folder / f"{name}.log", "wb") as log:  # the child keeps its own descriptor
            self.processes[name] = subprocess.Popen(
                [str(self.home / "bin" / "spark-class"), *args], env=self.env, cwd=self.folder, stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)

    def start(self) -> None:
        """Start the master, then the workers; return once every worker is registered and alive.
        RuntimeError (with the logs' tails) if a daemon exits or the workers do not register in time."""
        self._spawn("master", MASTER_CLASS, "--host", "127.0.0.1", "--port", str(self.port),
                    "--webui-port", str(self.web_port))
        for i, web_port in enumerate(self.worker_web_ports):
            self._spawn(f"worker{i}", WORKER_CLASS, "--host", "127.0.0.1", "--port", "0", "--webui-port",
                        str(web_port), "--cores", "1", "--memory", "1g", "--work-dir", str(self.worker_dir(i)),
                        self.master_url)
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            exited = [name for name, p in self.processes.items() if p.poll() is not None]
            if exited:
                raise RuntimeError(f"a Spark daemon exited while starting ({exited}):\n{self.logs()}")
            try:
                workers = self.state()["workers"]
            except OSError:  # the master's web UI is not up yet
                workers = []
            if sum(w["state"] == "ALIVE" for w in workers) == len(self.worker_web_ports):
                return
            time.sleep(0.5)
        raise RuntimeError(f"the workers did not register with the master in {STARTUP_SECONDS} s:\n{self.logs()}")

    def logs(self, lines: int = 15) -> str:
        """The last lines of each daemon's log."""
        tails = []
        for log in sorted(self.folder.glob("*.log")):
            text = log.read_text(errors="replace").splitlines()[-lines:]
            tails.append(f"--- {log.name}\n" + "\n".join(text))
        return "\n".join(tails)

    def stop(self) -> list[int]:
        """End every daemon with its executors (SIGTERM, then SIGKILL after ``STOP_SECONDS``); the
        process groups still alive after that (none, unless something is badly wrong)."""
        groups = [p.pid for p in self.processes.values()]  # each daemon leads its own group
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pgid in groups:
                try:
                    os.killpg(pgid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + STOP_SECONDS
            for process in self.processes.values():
                try:
                    process.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
            while time.monotonic() < deadline and any(group_alive(g) for g in groups):
                time.sleep(0.2)
            if not any(group_alive(g) for g in groups):
                break
        return [g for g in groups if group_alive(g)]
