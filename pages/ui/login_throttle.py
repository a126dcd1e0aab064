"""Slows down password guessing: a growing wait after each wrong password, then a lockout, per client.

One record for the whole server process (every session's thread shares it), keyed by the client's address
(`st.context.ip_address`; behind a reverse proxy on the same machine Streamlit takes it from X-Forwarded-For),
else by a token of the browser session. A try during a wait is refused without looking at the password;
nothing sleeps in the server's threads.
"""
from __future__ import annotations

import ipaddress
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

FIRST_DELAY_S = 1.0  # a person retyping needs longer than this; a script drops from hundreds of tries a second to one
MAX_DELAY_S = 30.0  # the doubling stops here, so the wait stays bearable if MAX_FAILURES is raised
MAX_FAILURES = 5  # wrong passwords within WINDOW_S that start a lockout: more than a member's typos
WINDOW_S = 15 * 60.0  # a wrong password older than this no longer counts towards a lockout
LOCKOUT_S = 15 * 60.0  # with MAX_FAILURES, about 5 guesses per 15 minutes (480 a day) from one client
MAX_CLIENTS = 10_000  # clients remembered at once (about 10 MB); past it the longest quiet ones are forgotten
IPV6_PREFIX = 64  # one IPv6 client owns a whole /64, so its addresses count as one

SESSION_TOKEN = "login_throttle_client"  # session_state key of the fallback token


class Wait(NamedTuple):
    """Why a try is refused: seconds left, and whether it is the lockout (else the wait after a failure)."""
    seconds: float
    lockout: bool


@dataclass
class _Record:
    failures: deque = field(default_factory=lambda: deque(maxlen=MAX_FAILURES))
    until: float = 0.0  # no try before this time
    lockout: bool = False
    seen: float = 0.0  # last try


class LoginThrottle:
    """Failed tries per client, thread-safe and bounded; `clock` is injectable for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, max_clients: int = MAX_CLIENTS) -> None:
        self._clock = clock
        self._max_clients = max_clients
        self._records: OrderedDict[str, _Record] = OrderedDict()  # least recently tried first
        self._lock = threading.Lock()

    def admit(self, client: str) -> Wait | None:
        """A Wait when `client` may not try now; else None, and the try counts as a failure until `succeeded`.

        Counting before the password is checked makes check-and-count one step, so parallel sessions from one
        address cannot slip several guesses into the same moment.
        """
        with self._lock:
            now = self._clock()
            self._sweep(now)
            record = self._records.get(client)
            if record is not None and now < record.until:
                return Wait(record.until - now, record.lockout)
            if record is None:
                record = self._records[client] = _Record()
            self._records.move_to_end(client)
            record.seen = now
            while record.failures and now - record.failures[0] >= WINDOW_S:
                record.failures.popleft()
            record.failures.append(now)
            record.lockout = len(record.failures) >= MAX_FAILURES
            if record.lockout:
                record.failures.clear()
                record.until = now + LOCKOUT_S
            else:
                record.until = now + min(FIRST_DELAY_S * 2 ** (len(record.failures) - 1), MAX_DELAY_S)
            self._bound()
            return None

    def succeeded(self, client: str) -> None:
        """The right password: forget the client's failures."""
        with self._lock:
            self._records.pop(client, None)

    def waiting(self, client: str) -> Wait | None:
        """The Wait in force for `client` now, without counting a try."""
        with self._lock:
            now = self._clock()
            record = self._records.get(client)
            if record is None or now >= record.until:
                return None
            return Wait(record.until - now, record.lockout)

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def _sweep(self, now: float) -> None:
        forget_after = max(WINDOW_S, LOCKOUT_S, MAX_DELAY_S)  # by then a record neither blocks nor counts
        while self._records:
            record = next(iter(self._records.values()))
            if now - record.seen < forget_after:
                break
            self._records.popitem(last=False)

    def _bound(self) -> None:
        while len(self._records) > self._max_clients:
            self._records.popitem(last=False)


THROTTLE = LoginThrottle()


def client() -> tuple[str, str]:
    """This session's client key, and what it is in words ("address" or "browser session")."""
    import streamlit as st

    ip = st.context.ip_address
    if isinstance(ip, str) and ip:
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return f"ip:{ip}", "address"
        if addr.version == 6 and addr.ipv4_mapped:
            addr = addr.ipv4_mapped
        if addr.version == 6:
            return f"ip:{ipaddress.ip_network(f'{addr}/{IPV6_PREFIX}', strict=False)}", "address"
        return f"ip:{addr}", "address"
    if SESSION_TOKEN not in st.session_state:  # localhost, or a proxy that does not send X-Forwarded-For
        st.session_state[SESSION_TOKEN] = secrets.token_hex(8)
    return f"session:{st.session_state[SESSION_TOKEN]}", "browser session"


def in_words(seconds: float) -> str:
    """'12 minutes', '1 minute', '3 seconds': rounded up, minutes from 90 seconds on."""
    if seconds >= 90:
        n, unit = math.ceil(seconds / 60), "minute"
    else:
        n, unit = max(1, math.ceil(seconds)), "second"
    return f"{n} {unit}{'' if n == 1 else 's'}"


def message(wait: Wait, where: str) -> str:
    """What the login page says while `wait` is in force."""
    if wait.lockout:
        return f"Too many wrong passwords from this {where}; try again in {in_words(wait.seconds)}."
    return f"Too quick after a wrong password from this {where}; try again in {in_words(wait.seconds)}."
