#!/usr/bin/env python3
"""The sync client's elections: leads examples/python-election with lead() and, while leading,
reads the election's observation as an iterator; then observes the vacancy.

    python election_example.py --server HOST:PORT[,HOST:PORT...]      (default 127.0.0.1:50051)

docs/clients.md quotes the part between the docs markers (PythonDocsExamplesTest checks that
and runs this program against a real server).
"""
import argparse

try:
    import redlockd
except ModuleNotFoundError as missing:  # grpcio or protobuf: the message says how to install them
    raise SystemExit(f"election_example.py: {missing}") from None
from redlockd import Leadership, LockClient


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="127.0.0.1:50051",
                        help="HOST:PORT of redlockd, or several, comma-separated")
    args = parser.parse_args()
    channel = redlockd.channel(args.server.split(","))
    try:
        # --- docs example begins: lead ---
        client = LockClient(channel)

        def work(leadership: Leadership) -> int:
            print(f"leading in term {leadership.term}")
            for _ in range(3):  # a thread cannot be interrupted: the work checks between steps
                if leadership.lost.wait(0.2):  # set the moment the leadership is lost
                    break
            return leadership.term

        # Campaigns, runs work while leading, resigns; requeue=True would lead again after a loss.
        term = client.lead("examples/python-election", "10.0.0.7:8080", ttl=10, work=work)
        print(f"resigned after term {term}")
        # --- docs example ends ---

        # --- docs example begins: observe ---
        with client.observe("examples/python-election") as changes:  # closed at the block's end
            for leader in changes:  # the current leader (or None), then every change
                print(f"observed: {leader.value if leader else 'no leader'}")
                break
        # --- docs example ends ---
    finally:
        channel.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
