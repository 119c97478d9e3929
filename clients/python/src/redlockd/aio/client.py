"""AsyncLockClient: the sync :class:`~redlockd.LockClient` on grpc.aio, its procedures awaited."""
from __future__ import annotations

import asyncio
from types import TracebackType
from typing import (Any, Awaitable, Callable, Coroutine, Generator, Generic, Optional, Type,
                    TypeVar, Union, overload)

import grpc
import grpc.aio

from .. import _durations
from .._calls import Answered
from .._channel import target, with_defaults
from .._clock import Clock
from .._tracecontext import aio_interceptors
from ..client import ClientBase, check_permits
from ..election import Leader, campaigning
from ..errors import LeaseLost
from ..retry import RetryPolicy
from ._calls import AsyncCalls
from ._tasks import run
from .election import AsyncLeaderStream, AsyncLeadership, AsyncObservation
from .lease import AsyncLease

__all__ = ["AsyncLockClient", "channel"]

T = TypeVar("T")
H = TypeVar("H", AsyncLease, AsyncLeadership)


def channel(addresses: Union[str, "list[str]", "tuple[str, ...]"],
            credentials: Optional[grpc.ChannelCredentials] = None,
            options: "list[tuple[str, Any]] | tuple[tuple[str, Any], ...]" = ()
            ) -> grpc.aio.Channel:
    """A grpc.aio channel to the redlockd replicas at ``addresses``, as
    :func:`redlockd.channel` (round_robin over every address). Make it on the event loop; it is
    yours to close (``await channel.close()``)."""
    where = target(addresses)
    all_options = with_defaults(options)
    if credentials is None:
        return grpc.aio.insecure_channel(where, options=all_options, interceptors=aio_interceptors())
    return grpc.aio.secure_channel(where, credentials, options=all_options, interceptors=aio_interceptors())


class PendingHandle(Generic[H]):
    """A lease or leadership on its way: ``await`` it, or ``async with`` it (leaving the block
    releases or resigns)."""

    def __init__(self, coroutine: Coroutine[Any, Any, H]) -> None:
        self._coroutine: Coroutine[Any, Any, H] = coroutine
        self._held: Optional[H] = None

    def __await__(self) -> Generator[Any, None, H]:
        held: H = yield from self._coroutine.__await__()
        return held

    async def __aenter__(self) -> H:
        held: H = await self._coroutine
        self._held = held
        return held

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if self._held is not None:
            await self._held.close()


class AsyncLockClient(ClientBase[AsyncLease]):
    """The redlockd client for asyncio, on a grpc.aio channel; the same names and rules as
    :class:`redlockd.LockClient`::

        client = AsyncLockClient(redlockd.aio.channel(["10.0.0.1:50051", "10.0.0.2:50051"]))
        async with client.acquire("orders/42", ttl=10, wait=2) as lease:
            await store.write(order, fencing_token=lease.fencing_token)

    Nothing blocks the loop: the kept streams are tasks, the deadline checks loop timers, the
    loss callbacks run on the loop. Use it from one event loop (the one its channel was made
    on). The client never closes the channel.
    """

    def __init__(self, channel: grpc.aio.Channel, *, call_timeout: _durations.Seconds = 5.0,
                 retry: RetryPolicy = RetryPolicy(), owner: Optional[str] = None,
                 _clock: Optional[Clock] = None, _answered: Answered = None) -> None:
        # _clock and _answered are for tests only, as LockClient's.
        super().__init__(AsyncCalls(channel, _durations.seconds(call_timeout), retry, _clock,
                                    _answered), owner, AsyncLease)

    # --- acquiring -----------------------------------------------------------------------------

    def acquire(self, resource: str, ttl: _durations.Seconds,
                wait: _durations.Seconds = 0.0) -> PendingHandle[AsyncLease]:
        """Takes the lock, waiting up to ``wait`` while someone else holds it: ``lease = await
        client.acquire(...)`` or ``async with client.acquire(...) as lease``. Raises as
        :meth:`redlockd.LockClient.acquire`; a cancelled acquire gives its token back."""
        return PendingHandle(self._acquire(resource, ttl, wait, 0))

    def acquire_permit(self, resource: str, permits: int, ttl: _durations.Seconds,
                       wait: _durations.Seconds = 0.0) -> PendingHandle[AsyncLease]:
        """Takes one of ``permits`` permits of the semaphore ``resource``, waiting up to
        ``wait`` while every permit is held: ``lease = await client.acquire_permit(...)`` or
        ``async with client.acquire_permit(...) as lease``. The same :class:`AsyncLease` as a
        lock's, with its :attr:`~AsyncLease.permit` (1..N); as
        :meth:`redlockd.LockClient.acquire_permit`."""
        return PendingHandle(self._acquire(resource, ttl, wait, check_permits(permits)))

    async def try_acquire(self, resource: str, ttl: _durations.Seconds) -> Optional[AsyncLease]:
        """One attempt without waiting: the lease, or None when someone else holds the lock."""
        return self._lease_or_none(await run(self._trying(resource, ttl, 0)))

    async def try_acquire_permit(self, resource: str, permits: int,
                                 ttl: _durations.Seconds) -> Optional[AsyncLease]:
        """One attempt without waiting: a permit's lease, or None when every permit is held."""
        return self._lease_or_none(await run(self._trying(resource, ttl, check_permits(permits))))

    async def _acquire(self, resource: str, ttl: _durations.Seconds, wait: _durations.Seconds,
                       permits: int) -> AsyncLease:
        return self._lease(await run(self._acquiring(resource, ttl, wait, permits)))

    @overload
    def with_lock(self, resource: str, ttl: _durations.Seconds,
                  wait: _durations.Seconds = 0.0) -> "KeptLease": ...

    @overload
    def with_lock(self, resource: str, ttl: _durations.Seconds, wait: _durations.Seconds,
                  fn: Callable[[AsyncLease], Awaitable[T]]) -> Awaitable[T]: ...

    def with_lock(self, resource: str, ttl: _durations.Seconds, wait: _durations.Seconds = 0.0,
                  fn: Optional[Callable[[AsyncLease], Awaitable[T]]] = None
                  ) -> "KeptLease | Awaitable[T]":
        """Holds the lock, kept alive, while work runs, and releases it afterwards::

            async with client.with_lock("orders/42", ttl=10, wait=2) as lease:
                await store.write(order, fencing_token=lease.fencing_token)

        A block cannot be stopped from outside: it should check ``lease.valid`` (or wait on
        ``lease.lost``); a loss is raised as :class:`LeaseLost` when it ends. With ``fn``:
        ``await client.with_lock(..., fn)`` runs ``await fn(lease)`` as a task cancelled the
        moment the lease is lost (unlike a thread, it can be stopped), and returns its result;
        the loss is raised once it ended.
        """
        return _kept_while(self.acquire(resource, ttl, wait), fn)

    @overload
    def with_permit(self, resource: str, permits: int, ttl: _durations.Seconds,
                    wait: _durations.Seconds = 0.0) -> "KeptLease": ...

    @overload
    def with_permit(self, resource: str, permits: int, ttl: _durations.Seconds,
                    wait: _durations.Seconds, fn: Callable[[AsyncLease], Awaitable[T]]
                    ) -> Awaitable[T]: ...

    def with_permit(self, resource: str, permits: int, ttl: _durations.Seconds,
                    wait: _durations.Seconds = 0.0,
                    fn: Optional[Callable[[AsyncLease], Awaitable[T]]] = None
                    ) -> "KeptLease | Awaitable[T]":
        """Holds one of ``permits`` permits of ``resource`` (see :meth:`acquire_permit`), kept
        alive, while work runs, and releases it afterwards, as :meth:`with_lock`::

            async with client.with_permit("partner-api", 8, ttl=10, wait=30) as lease:
                await call_partner(fencing_token=lease.fencing_token)
        """
        return _kept_while(self.acquire_permit(resource, permits, ttl, wait), fn)

    # --- elections ---------------------------------------------------------------------------

    def campaign(self, election: str, value: str, ttl: _durations.Seconds,
                 wait: Optional[_durations.Seconds] = None) -> PendingHandle[AsyncLeadership]:
        """Runs for leader of ``election`` (``await`` it, or ``async with`` it: leaving the
        block resigns); as :meth:`redlockd.LockClient.campaign`. Cancelling it withdraws the
        candidacy."""
        return PendingHandle(run(campaigning(self._calls, election, value, ttl, wait,
                                             AsyncLeadership)))

    async def leader(self, election: str) -> Optional[Leader]:
        """The current leader of ``election`` (value and term), or None when it has none."""
        return await run(self._leader(election))

    @overload
    def observe(self, election: str) -> AsyncLeaderStream: ...

    @overload
    def observe(self, election: str,
                callback: Callable[[Optional[Leader]], None]) -> AsyncObservation: ...

    def observe(self, election: str,
                callback: Optional[Callable[[Optional[Leader]], None]] = None
                ) -> "AsyncLeaderStream | AsyncObservation":
        """The current leader of ``election`` (or None), then every change: without
        ``callback`` an :class:`AsyncLeaderStream` (``async for`` it, ``async with`` it); with
        ``callback``, called on the loop until the returned observation is closed."""
        stream = AsyncLeaderStream(self._calls, election)
        return stream if callback is None else AsyncObservation(stream, callback)

    async def lead(self, election: str, value: str, ttl: _durations.Seconds,
                   work: Callable[[AsyncLeadership], Awaitable[T]], requeue: bool = False) -> T:
        """Runs ``await work(leadership)`` while leading ``election`` and returns its result.

        Campaigns (as long as it takes), then runs ``work`` as a task, cancelled the moment the
        leadership is lost. When ``work`` returns while leading: resigns and returns its result.
        When the leadership was lost: once ``work`` ended, raises the loss (:class:`LeaseLost`),
        or with ``requeue`` campaigns again and runs ``work`` again. ``work`` raising an error of
        its own: resigns and re-raises it. Cancelling ``lead`` cancels ``work``, waits for it,
        resigns, and raises :class:`asyncio.CancelledError`.
        """
        while True:
            async with self.campaign(election, value, ttl) as leadership:
                try:
                    return await _run_while(leadership, work)
                except LeaseLost as e:
                    if e is not leadership.lost_error or not requeue:
                        raise


def _kept_while(pending: PendingHandle[AsyncLease],
                fn: Optional[Callable[[AsyncLease], Awaitable[T]]]) -> "KeptLease | Awaitable[T]":
    """with_lock's and with_permit's two forms: a block, or ``fn`` as a task."""
    if fn is None:
        return KeptLease(pending)
    return _run_kept(pending, fn)


async def _run_kept(pending: PendingHandle[AsyncLease],
                    fn: Callable[[AsyncLease], Awaitable[T]]) -> T:
    async with pending as lease:
        lease.keep_alive()
        return await _run_while(lease, fn)


class KeptLease:
    """``async with client.with_lock(...) as lease`` (or ``with_permit``): the lease kept alive
    in the block and released after it; its loss raised when the block ends (chained to the
    block's own exception, if it raised one; a cancellation is left as it is)."""

    def __init__(self, pending: PendingHandle[AsyncLease]) -> None:
        self._pending = pending
        self._lease: Optional[AsyncLease] = None

    async def __aenter__(self) -> AsyncLease:
        self._lease = await self._pending
        return self._lease.keep_alive()

    async def __aexit__(self, exc_type: Optional[Type[BaseException]],
                        exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        lease = self._lease
        if lease is None:
            return
        await lease.close()
        lost = lease.lost_error
        # A cancellation (or an interrupt) goes on as it is: the task must still see it.
        if lost is not None and lost is not exc and (exc is None or isinstance(exc, Exception)):
            raise lost from exc


async def _run_while(held: H, work: Callable[[H], Awaitable[T]]) -> T:
    """Runs ``work(held)`` as a task cancelled the moment ``held`` is lost; its result, or the
    loss once it ended (work told of the loss may return, raise the loss or be cancelled), or
    the error of its own. Cancelled itself: cancels the work and waits for it."""
    task: "asyncio.Future[T]" = asyncio.ensure_future(work(held))

    def cancel_work(error: LeaseLost) -> None:
        task.cancel()

    held.on_lost(cancel_work)
    try:
        await asyncio.wait([task])
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.wait([task])
        raise
    lost = held.lost_error
    if task.cancelled():
        if lost is not None:
            raise lost
        raise asyncio.CancelledError()  # the work cancelled itself
    error = task.exception()
    if error is None:
        if lost is not None:
            raise lost
        return task.result()
    if lost is not None and (error is lost or isinstance(error, asyncio.CancelledError)):
        raise lost from None
    raise error
