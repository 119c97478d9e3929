"""Generated gRPC stubs of redlock.v1 (see generate.sh); not part of the public API."""
