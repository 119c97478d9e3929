#!/usr/bin/env python3
"""How long a kept lease takes to resume through another replica when the one its stream goes
through stops answering (issue 40), per client: the measurement behind the docs' figure, to be
run on a quiet machine.

    /usr/bin/python3 clients/python/measure/silent_replica.py [--runs 3] [--ttl 5]
        [--languages python,python-aio,node] [--fault sigstop|blackhole] [--server-flags "..."]

from the repository root, after ``mvn -B -q -DskipTests -pl server -am package`` (the server
jar) and ``npm ci`` in clients/node (its dist/). It starts 5 redis-server nodes and two server
replicas on free ports (under clients/python/target/measure), and per run and language: a
holder (measure/hold.py, clients/node/measure/hold.mjs) acquires a lease with the ttl and keeps
it alive on a channel listing both replicas; 1.5 s later the replica its KeepAlive stream goes
through (the one whose redlockd_keepalive_streams_open is not 0) gets SIGSTOP (or, with
``--fault blackhole``, the proxy the channel reaches it through stops forwarding). Measured:
from just before the fault to the first move of the lease's deadline after it (CLOCK_MONOTONIC
on both sides). The fault ends (SIGCONT, or the proxy forwards what it held) once ttl + 1 s
have passed; for 3 s after that the key
must stay held by a quorum of nodes while the holder holds it (a replica that wakes must not
release a lease its holder resumed elsewhere). Then the holder releases.

Prints one line per run, then per language the resume times (ms), the losses and the releases
seen after the wake. Everything it started is stopped on the way out.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[3]
WORK = ROOT / "clients" / "python" / "target" / "measure"
JAR = ROOT / "server" / "target" / "redlockd-server.jar"
NODES = 5
QUORUM = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(predicate, timeout: float, what: str) -> None:
    until = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > until:
            raise RuntimeError(f"{what}: not within {timeout} s")
        time.sleep(0.05)


class Redis:
    def __init__(self, index: int) -> None:
        self.port = free_port()
        home = WORK / f"redis{index}"
        home.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(home), "--logfile", str(home / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(lambda: self.pttl("x") is not None, 10, f"redis on {self.port}")

    def pttl(self, key: str) -> Optional[int]:
        """PTTL of ``key`` in ms (negative: none), or None when the node does not answer."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                k = key.encode()
                s.sendall(b"*2\r\n$4\r\nPTTL\r\n$%d\r\n%s\r\n" % (len(k), k))
                reply = s.recv(64)
            return int(reply[1:].split(b"\r\n")[0])
        except (OSError, ValueError):
            return None

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


class Replica:
    #: Extra server flags (--server-flags), e.g. a longer --node-timeout on a loaded machine.
    FLAGS: List[str] = []

    def __init__(self, name: str, redis: str) -> None:
        self.name = name
        self.port = free_port()
        self.metrics = free_port()
        self.log = open(WORK / f"{name}.log", "w")
        self.command = ["java", "-jar", str(JAR), "--redis", redis, "--port", str(self.port),
                        "--bind", "127.0.0.1", "--metrics-port", str(self.metrics), *self.FLAGS]
        self.process = subprocess.Popen(self.command, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(lambda: self.gauge("redlockd_serving") == 1, 60, f"replica {name}")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def gauge(self, name: str) -> Optional[float]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=1) as r:
                text = r.read().decode()
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        return None

    def stop(self) -> None:
        self.process.send_signal(signal.SIGCONT)
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self.log.close()


class Proxy:
    """A TCP proxy in front of one replica that can stop forwarding without closing anything
    (``--fault blackhole``): what it receives meanwhile, on old connections and new ones, waits
    and is forwarded once it goes on, as after a partition that heals."""

    def __init__(self, upstream: int) -> None:
        self._upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._open = threading.Event()
        self._open.set()
        self._sockets: List[socket.socket] = [self._listener]
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def hold(self) -> None:
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
                server = socket.create_connection(("127.0.0.1", self._upstream))
            except OSError:
                return
            self._sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                self._open.wait()
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self._open.set()
        for s in self._sockets:
            s.close()


class Holder:
    """One holder process; its JSON lines collected by a thread."""

    def __init__(self, language: str, servers: str, resource: str, ttl: float) -> None:
        env = dict(os.environ)
        if language.startswith("python"):
            env["PYTHONPATH"] = str(ROOT / "clients" / "python" / "src")
            command = ["/usr/bin/python3", str(ROOT / "clients/python/measure/hold.py")]
            if language == "python-aio":
                command.append("--aio")
        elif language == "node":
            command = ["node", str(ROOT / "clients/node/measure/hold.mjs")]
        else:
            raise ValueError(f"unknown language {language}")
        command += ["--server", servers, "--resource", resource, "--ttl", str(ttl)]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=env)
        self.events: List[Dict[str, str]] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            with self.changed:
                self.events.append(event)
                self.changed.notify_all()

    def first(self, kind: str, after_ns: int = 0, timeout: float = 30) -> Optional[Dict[str, str]]:
        def found() -> Optional[Dict[str, str]]:
            for e in self.events:
                if e["event"] == kind and int(e.get("mono_ns", "0")) >= after_ns:
                    return e
            return None
        with self.changed:
            self.changed.wait_for(lambda: found() is not None, timeout)
            return found()

    def release(self) -> Optional[bool]:
        assert self.process.stdin is not None
        self.process.stdin.write("release\n")
        self.process.stdin.flush()
        released = self.first("released", timeout=15)
        self.process.wait(15)
        return None if released is None else bool(released["released"])

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def one_run(language: str, run: int, ttl: float, nodes: List[Redis], replicas: List[Replica],
            proxies: Optional[List[Proxy]]) -> dict:
    resource = f"silent-{language}-{run}-{os.getpid()}"
    key = f"redlock:{{{resource}}}:lock"
    servers = proxies if proxies is not None else replicas
    holder = Holder(language, ",".join(r.address for r in servers), resource, ttl)
    try:
        if holder.first("held", timeout=30) is None:
            raise RuntimeError(f"{language}: no lease")
        time.sleep(1.5)
        carriers = [r for r in replicas if (r.gauge("redlockd_keepalive_streams_open") or 0) > 0]
        if len(carriers) != 1:
            raise RuntimeError(f"{language}: streams on {[r.name for r in carriers]}, not on one replica")
        silent = carriers[0]
        proxy = None if proxies is None else proxies[replicas.index(silent)]
        fault_ns = time.monotonic_ns()
        if proxy is None:
            silent.process.send_signal(signal.SIGSTOP)
        else:
            proxy.hold()
        try:
            renewed = holder.first("renewed", after_ns=fault_ns, timeout=ttl + 2)
            lost = holder.first("lost", timeout=0)
            time.sleep(max(0.0, fault_ns / 1e9 + ttl + 1 - time.monotonic()))
        finally:
            if proxy is None:
                silent.process.send_signal(signal.SIGCONT)
            else:
                proxy.release()
        # The woken replica must not free what its holder holds through the other one.
        freed_while_held = 0
        until = time.monotonic() + 3
        while time.monotonic() < until:
            held = sum(1 for n in nodes if (n.pttl(key) or -1) > 0)
            if held < QUORUM and holder.first("lost", timeout=0) is None:
                freed_while_held += 1
            time.sleep(0.05)
        lost = lost or holder.first("lost", timeout=0)
        released = holder.release()
        return {
            "language": language, "run": run, "silenced": silent.name,
            "resume_ms": None if renewed is None else (int(renewed["mono_ns"]) - fault_ns) / 1e6,
            "lost": lost is not None, "freed_while_held_polls": freed_while_held,
            "released": released,
        }
    finally:
        holder.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ttl", type=float, default=5.0)
    parser.add_argument("--languages", default="python,python-aio,node")
    parser.add_argument("--server-flags", default="",
                        help="extra server flags, space-separated (default: none)")
    parser.add_argument("--fault", choices=("sigstop", "blackhole"), default="sigstop",
                        help="sigstop: the replica's JVM is stopped; blackhole: a proxy in front "
                             "of it stops forwarding, its connections left open")
    args = parser.parse_args()
    Replica.FLAGS = args.server_flags.split()
    if not JAR.exists():
        print(f"{JAR} is missing: mvn -B -q -DskipTests -pl server -am package", file=sys.stderr)
        return 2
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    nodes: List[Redis] = []
    replicas: List[Replica] = []
    proxies: Optional[List[Proxy]] = None
    results = []
    try:
        nodes = [Redis(i) for i in range(NODES)]
        redis = ",".join(f"redis://127.0.0.1:{n.port}" for n in nodes)
        replicas = [Replica("A", redis), Replica("B", redis)]
        if args.fault == "blackhole":
            proxies = [Proxy(r.port) for r in replicas]
        for run in range(1, args.runs + 1):
            for language in args.languages.split(","):
                result = one_run(language, run, args.ttl, nodes, replicas, proxies)
                results.append(result)
                print(json.dumps(result), flush=True)
                for r in replicas:  # the woken replica serves again before the next run
                    wait_until(lambda: r.gauge("redlockd_serving") == 1, 30, f"replica {r.name}")
    finally:
        for p in proxies or []:
            p.close()
        for r in replicas:
            r.stop()
        for n in nodes:
            n.stop()
    fault = "SIGSTOP of" if args.fault == "sigstop" else "a proxy that stops forwarding in front of"
    print(f"ttl {args.ttl} s, {fault} the replica carrying the stream:")
    for language in args.languages.split(","):
        mine = [r for r in results if r["language"] == language]
        times = [round(r["resume_ms"]) for r in mine if r["resume_ms"] is not None and not r["lost"]]
        print(f"  {language:10} resumed after (ms): {times}; lost: {sum(r['lost'] for r in mine)} of "
              f"{len(mine)}; freed after the fault ended, while held: "
              f"{sum(1 for r in mine if r['freed_while_held_polls'])} of {len(mine)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
