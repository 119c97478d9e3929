#!/usr/bin/python3
"""redlockd from Python: acquire a lock, keep it alive on a KeepAlive stream, release it.

The stubs are generated from proto/src/main/proto at each run (into a temporary directory),
so they always match the contract. Prints the lease's fencing token, never its token: the
token is the proof of ownership, whoever has it can release the lock.

Exit status 0 when every step went as the contract says, 1 on any failure.
"""

import argparse
import os
import queue
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from google.protobuf.duration_pb2 import Duration

DEFAULT_PROTO_DIR = Path(__file__).resolve().parents[2] / "proto" / "src" / "main" / "proto"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default=os.environ.get("REDLOCKD_SERVER", "127.0.0.1:50051"),
                        help="host:port of redlockd (env REDLOCKD_SERVER, default %(default)s)")
    parser.add_argument("--resource", default="examples/python", help="lock name (default %(default)s)")
    parser.add_argument("--ttl-seconds", type=float, default=3.0,
                        help="lease ttl; the server renews every ttl/3 (default %(default)s)")
    parser.add_argument("--wait-seconds", type=float, default=0.0,
                        help="how long Acquire waits while someone else holds the lock (default %(default)s)")
    parser.add_argument("--hold-seconds", type=float, default=0.0,
                        help="keep the lease at least this long before releasing it (default %(default)s)")
    parser.add_argument("--renewals", type=int, default=2,
                        help="release after at least this many HELD renewals (default %(default)s)")
    parser.add_argument("--proto-dir", default=str(DEFAULT_PROTO_DIR),
                        help="where redlock/v1/lock.proto lives (default: this repository's)")
    return parser.parse_args()


def generate_stubs(proto_dir, out_dir):
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I" + proto_dir,
                    "--python_out=" + out_dir, "--grpc_python_out=" + out_dir, "redlock/v1/lock.proto"],
                   check=True)
    # Regular packages, so that no other installed "redlock" package shadows the stubs.
    for package in ("redlock", "redlock/v1"):
        Path(out_dir, package, "__init__.py").touch()
    sys.path.insert(0, out_dir)
    from redlock.v1 import lock_pb2, lock_pb2_grpc
    return lock_pb2, lock_pb2_grpc


def duration(seconds):
    d = Duration()
    d.FromNanoseconds(int(seconds * 1e9))
    return d


def say(line):
    # Flushed at once, so whoever watches the output (a test, a pipe) sees each step as it happens.
    print(line, flush=True)


def keep_and_release(stub, pb, args, lease):
    """Opens a KeepAlive stream for the lease; half-closes it once held long enough."""
    requests = queue.Queue()
    requests.put(pb.KeepAliveRequest(resource=lease.resource, token=lease.token,
                                     ttl=duration(args.ttl_seconds), sequence=1))

    def request_stream():
        while True:
            request = requests.get()
            if request is None:
                return  # ending the request stream half-closes it: the server releases the lease
            yield request

    # A bound on the whole stream, so that the example never hangs.
    limit = args.hold_seconds + (args.renewals + 2) * args.ttl_seconds + 30
    started = time.monotonic()
    held = 0
    closing = False
    try:
        for response in stub.KeepAlive(request_stream(), timeout=limit):
            if response.state == pb.LEASE_STATE_HELD:
                held += 1
            say(f"renewal: {pb.LeaseState.Name(response.state)}, fencing token {response.lease.fencing_token}, "
                f"valid for {response.lease.validity.ToTimedelta().total_seconds():.3f}s")
            if not closing and held >= args.renewals and time.monotonic() - started >= args.hold_seconds:
                requests.put(None)
                closing = True
    finally:
        requests.put(None)  # lets the request thread end however the stream ended
    if not closing:
        raise RuntimeError("the server ended the stream before the example released the lease")
    say(f"released {lease.resource}: the KeepAlive stream ended OK after {held} HELD renewals")


def main():
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="redlockd-stubs-") as gen:
        pb, pb_grpc = generate_stubs(args.proto_dir, gen)
        with grpc.insecure_channel(args.server) as channel:
            stub = pb_grpc.LockServiceStub(channel)
            try:
                lease = stub.Acquire(pb.AcquireRequest(resource=args.resource,
                                                       ttl=duration(args.ttl_seconds),
                                                       wait=duration(args.wait_seconds),
                                                       owner=f"python example pid {os.getpid()}"),
                                     timeout=args.wait_seconds + 10).lease
                say(f"acquired {lease.resource}: fencing token {lease.fencing_token}, "
                    f"valid for {lease.validity.ToTimedelta().total_seconds():.3f}s")
                keep_and_release(stub, pb, args, lease)
            except grpc.RpcError as e:
                # Status messages never carry the token (the server's contract).
                print(f"failed: {e.code().name}: {e.details()}", file=sys.stderr, flush=True)
                return 1
            except RuntimeError as e:
                print(f"failed: {e}", file=sys.stderr, flush=True)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
