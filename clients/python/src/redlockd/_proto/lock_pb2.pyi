from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
LEASE_STATE_HELD: LeaseState
LEASE_STATE_JEOPARDY: LeaseState
LEASE_STATE_UNSPECIFIED: LeaseState

class AcquireRequest(_message.Message):
    __slots__ = ["owner", "permits", "resource", "token", "ttl", "wait"]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PERMITS_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    owner: str
    permits: int
    resource: str
    token: str
    ttl: _duration_pb2.Duration
    wait: _duration_pb2.Duration
    def __init__(self, resource: _Optional[str] = ..., ttl: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., wait: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., owner: _Optional[str] = ..., token: _Optional[str] = ..., permits: _Optional[int] = ...) -> None: ...

class AcquireResponse(_message.Message):
    __slots__ = ["lease"]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    lease: Lease
    def __init__(self, lease: _Optional[_Union[Lease, _Mapping]] = ...) -> None: ...

class DescribeRequest(_message.Message):
    __slots__ = ["resource"]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    resource: str
    def __init__(self, resource: _Optional[str] = ...) -> None: ...

class DescribeResponse(_message.Message):
    __slots__ = ["fencing_token", "free_permits", "held", "holder_identity", "holders", "nodes", "owner", "permits", "remaining_ttl"]
    FENCING_TOKEN_FIELD_NUMBER: _ClassVar[int]
    FREE_PERMITS_FIELD_NUMBER: _ClassVar[int]
    HELD_FIELD_NUMBER: _ClassVar[int]
    HOLDERS_FIELD_NUMBER: _ClassVar[int]
    HOLDER_IDENTITY_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PERMITS_FIELD_NUMBER: _ClassVar[int]
    REMAINING_TTL_FIELD_NUMBER: _ClassVar[int]
    fencing_token: int
    free_permits: int
    held: bool
    holder_identity: str
    holders: _containers.RepeatedCompositeFieldContainer[PermitHolder]
    nodes: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    permits: int
    remaining_ttl: _duration_pb2.Duration
    def __init__(self, held: bool = ..., owner: _Optional[str] = ..., remaining_ttl: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., fencing_token: _Optional[int] = ..., nodes: _Optional[_Iterable[str]] = ..., holder_identity: _Optional[str] = ..., permits: _Optional[int] = ..., free_permits: _Optional[int] = ..., holders: _Optional[_Iterable[_Union[PermitHolder, _Mapping]]] = ...) -> None: ...

class ExtendRequest(_message.Message):
    __slots__ = ["permit", "resource", "token", "ttl"]
    PERMIT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    permit: int
    resource: str
    token: str
    ttl: _duration_pb2.Duration
    def __init__(self, resource: _Optional[str] = ..., token: _Optional[str] = ..., ttl: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., permit: _Optional[int] = ...) -> None: ...

class ExtendResponse(_message.Message):
    __slots__ = ["lease"]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    lease: Lease
    def __init__(self, lease: _Optional[_Union[Lease, _Mapping]] = ...) -> None: ...

class ForceReleaseRequest(_message.Message):
    __slots__ = ["permit", "resource"]
    PERMIT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    permit: int
    resource: str
    def __init__(self, resource: _Optional[str] = ..., permit: _Optional[int] = ...) -> None: ...

class ForceReleaseResponse(_message.Message):
    __slots__ = ["released"]
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    released: bool
    def __init__(self, released: bool = ...) -> None: ...

class KeepAliveRequest(_message.Message):
    __slots__ = ["permit", "resource", "sequence", "token", "ttl"]
    PERMIT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    permit: int
    resource: str
    sequence: int
    token: str
    ttl: _duration_pb2.Duration
    def __init__(self, resource: _Optional[str] = ..., token: _Optional[str] = ..., ttl: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., sequence: _Optional[int] = ..., permit: _Optional[int] = ...) -> None: ...

class KeepAliveResponse(_message.Message):
    __slots__ = ["lease", "sequence", "state"]
    LEASE_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    lease: Lease
    sequence: int
    state: LeaseState
    def __init__(self, lease: _Optional[_Union[Lease, _Mapping]] = ..., state: _Optional[_Union[LeaseState, str]] = ..., sequence: _Optional[int] = ...) -> None: ...

class Lease(_message.Message):
    __slots__ = ["fencing_token", "permit", "resource", "token", "validity"]
    FENCING_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PERMIT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    fencing_token: int
    permit: int
    resource: str
    token: str
    validity: _duration_pb2.Duration
    def __init__(self, resource: _Optional[str] = ..., token: _Optional[str] = ..., validity: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., fencing_token: _Optional[int] = ..., permit: _Optional[int] = ...) -> None: ...

class PermitHolder(_message.Message):
    __slots__ = ["fencing_token", "holder_identity", "nodes", "owner", "permit", "remaining_ttl"]
    FENCING_TOKEN_FIELD_NUMBER: _ClassVar[int]
    HOLDER_IDENTITY_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    PERMIT_FIELD_NUMBER: _ClassVar[int]
    REMAINING_TTL_FIELD_NUMBER: _ClassVar[int]
    fencing_token: int
    holder_identity: str
    nodes: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    permit: int
    remaining_ttl: _duration_pb2.Duration
    def __init__(self, permit: _Optional[int] = ..., owner: _Optional[str] = ..., remaining_ttl: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., fencing_token: _Optional[int] = ..., nodes: _Optional[_Iterable[str]] = ..., holder_identity: _Optional[str] = ...) -> None: ...

class ReleaseRequest(_message.Message):
    __slots__ = ["permit", "resource", "token"]
    PERMIT_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    permit: int
    resource: str
    token: str
    def __init__(self, resource: _Optional[str] = ..., token: _Optional[str] = ..., permit: _Optional[int] = ...) -> None: ...

class ReleaseResponse(_message.Message):
    __slots__ = ["released"]
    RELEASED_FIELD_NUMBER: _ClassVar[int]
    released: bool
    def __init__(self, released: bool = ...) -> None: ...

class LeaseState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
