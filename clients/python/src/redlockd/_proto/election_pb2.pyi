from google.protobuf import duration_pb2 as _duration_pb2
from redlockd._proto import lock_pb2 as _lock_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CampaignRequest(_message.Message):
    __slots__ = ["election", "resume", "sequence", "token", "ttl", "value"]
    ELECTION_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    election: str
    resume: bool
    sequence: int
    token: str
    ttl: _duration_pb2.Duration
    value: str
    def __init__(self, election: _Optional[str] = ..., value: _Optional[str] = ..., ttl: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., sequence: _Optional[int] = ..., token: _Optional[str] = ..., resume: bool = ...) -> None: ...

class CampaignResponse(_message.Message):
    __slots__ = ["sequence", "state", "term", "validity", "value"]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TERM_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    state: _lock_pb2.LeaseState
    term: int
    validity: _duration_pb2.Duration
    value: str
    def __init__(self, term: _Optional[int] = ..., value: _Optional[str] = ..., validity: _Optional[_Union[_duration_pb2.Duration, _Mapping]] = ..., state: _Optional[_Union[_lock_pb2.LeaseState, str]] = ..., sequence: _Optional[int] = ...) -> None: ...

class LeaderRequest(_message.Message):
    __slots__ = ["election"]
    ELECTION_FIELD_NUMBER: _ClassVar[int]
    election: str
    def __init__(self, election: _Optional[str] = ...) -> None: ...

class LeaderResponse(_message.Message):
    __slots__ = ["leader"]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    leader: Leadership
    def __init__(self, leader: _Optional[_Union[Leadership, _Mapping]] = ...) -> None: ...

class Leadership(_message.Message):
    __slots__ = ["term", "value"]
    TERM_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    term: int
    value: str
    def __init__(self, value: _Optional[str] = ..., term: _Optional[int] = ...) -> None: ...

class ObserveRequest(_message.Message):
    __slots__ = ["election"]
    ELECTION_FIELD_NUMBER: _ClassVar[int]
    election: str
    def __init__(self, election: _Optional[str] = ...) -> None: ...

class ObserveResponse(_message.Message):
    __slots__ = ["leader"]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    leader: Leadership
    def __init__(self, leader: _Optional[_Union[Leadership, _Mapping]] = ...) -> None: ...
