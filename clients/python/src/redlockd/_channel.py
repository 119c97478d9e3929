"""A channel to one or several redlockd replicas, with calls spread over them (rule 16)."""
from __future__ import annotations

import ipaddress
from typing import Any, List, Optional, Sequence, Tuple, Union

import grpc

__all__ = ["channel", "target"]

_SCHEMES = ("dns:", "ipv4:", "ipv6:", "unix:", "unix-abstract:", "vsock:")


#: The options of every channel :func:`channel` makes (options given to it win); users who
#: make their own channel should give it the same (README "Channels you make yourself"):
#:
#: - round_robin over every address (rule 16), so that a stream reopened after its replica went
#:   away reaches one that is up;
#: - a replica that is down is tried again every 100 ms (gRPC's default reconnect backoff grows to
#:   two minutes), so that it is connected as soon as it is back: a stream that moves when the
#:   next replica of a rolling restart stops finds the one restarted just before among those ready
#:   (round_robin only picks a connected replica) instead of piling onto the others (issue 40).
#:   grpc.min_reconnect_backoff_ms stays gRPC's (20 s): gRPC takes it as the least time one
#:   connection attempt gets, so a small one gives up on a replica slow to answer its handshake
#:   (a loaded machine, a cold JVM); a refused connection is retried after the backoff all the same;
#: - HTTP/2 keepalive pings every 2 s while calls are open, a connection whose ping is not
#:   answered within 1 s closed: a replica that went silent (a frozen host, a partition) is
#:   then left for the others, for new calls too, instead of being picked again until TCP gives
#:   up minutes later. Pings without data are not limited in number (gRPC's default stops after
#:   two until data is sent). The server must permit pings that often: redlockd's permits one a
#:   second (docs/operating.md).
_DEFAULTS: Tuple[Tuple[str, Any], ...] = (
    ("grpc.lb_policy_name", "round_robin"),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 100),
    ("grpc.keepalive_time_ms", 2000),
    ("grpc.keepalive_timeout_ms", 1000),
    ("grpc.keepalive_permit_without_calls", 0),
    ("grpc.http2.max_pings_without_data", 0),
)


def _split(address: str) -> Tuple[str, str]:
    """``host:port`` or ``[v6]:port`` into host and port."""
    if address.startswith("["):
        host, sep, port = address[1:].partition("]:")
        if not sep:
            raise ValueError(f"'{address}': expected [IPv6]:PORT")
        return host, port
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"'{address}': expected HOST:PORT")
    return host, port


def _family(host: str) -> Optional[int]:
    try:
        return ipaddress.ip_address(host).version
    except ValueError:
        return None


def target(addresses: Union[str, Sequence[str]]) -> str:
    """The gRPC target for ``addresses``: ``host:port`` strings (or one string of them,
    comma-separated). IP addresses become a static list (``ipv4:a:1,b:2`` or ``ipv6:...``); one
    host name becomes ``dns:///name:port`` (every address it resolves to, re-resolved when
    connections fail). A string that already names a scheme (``dns:``, ``ipv4:``, ``unix:``...)
    is used as it is."""
    if isinstance(addresses, str):
        if addresses.startswith(_SCHEMES):
            return addresses
        addresses = [a for a in (part.strip() for part in addresses.split(",")) if a]
    items = list(addresses)
    if not items:
        raise ValueError("no server address given")
    if len(items) == 1 and items[0].startswith(_SCHEMES):
        return items[0]
    hosts = [_split(a) for a in items]
    families = {_family(host) for host, _ in hosts}
    if families == {4}:
        return "ipv4:" + ",".join(f"{host}:{port}" for host, port in hosts)
    if families == {6}:
        return "ipv6:" + ",".join(f"[{host}]:{port}" for host, port in hosts)
    if len(hosts) == 1:
        host, port = hosts[0]
        return f"dns:///{host}:{port}"
    raise ValueError(
        "several addresses must all be IPv4 or all IPv6 literals; for host names give one name "
        "that resolves to every replica (it becomes dns:///NAME:PORT), or a load balancer")


def with_defaults(options: Sequence[Tuple[str, Any]]) -> List[Tuple[str, Any]]:
    """The channel options: the defaults above, unless ``options`` names them, then ``options``."""
    given = {name for name, _ in options}
    all_options: List[Tuple[str, Any]] = [o for o in _DEFAULTS if o[0] not in given]
    return all_options + list(options)


def channel(addresses: Union[str, Sequence[str]],
            credentials: Optional[grpc.ChannelCredentials] = None,
            options: Sequence[Tuple[str, Any]] = ()) -> grpc.Channel:
    """A channel to the redlockd replicas at ``addresses`` that spreads its calls over them
    (gRPC's ``round_robin``), so that a kept stream whose replica goes away is reopened on one
    that is up. ``addresses``: ``["10.0.0.1:50051", "10.0.0.2:50051"]``, the same as one
    comma-separated string, or one DNS name (``"redlockd.internal:50051"``, every address it
    resolves to). ``credentials``: TLS (``grpc.ssl_channel_credentials(...)``); None: plaintext.
    The channel is yours: close it when done (the client never does)."""
    all_options = with_defaults(options)
    where = target(addresses)
    if credentials is None:
        return grpc.insecure_channel(where, options=all_options)
    return grpc.secure_channel(where, credentials, options=all_options)
