"""Password guessing is slowed per client: a growing wait after each wrong password, then a lockout.

The throttle on its own with a fake clock, then the real login page through AppTest with the same fake clock
(so nothing waits minutes) and with client addresses set by the test.
"""
from __future__ import annotations

import threading

import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from support.app_helpers import PASSWORD, locked_app, log_in
from pages.ui import login_throttle
from pages.ui.login_throttle import (FIRST_DELAY_S, LOCKOUT_S, MAX_DELAY_S, MAX_FAILURES, WINDOW_S,
                                     LoginThrottle, Wait)



class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def fail(throttle: LoginThrottle, client: str = "a") -> None:
    """One wrong password, taken as soon as it is allowed."""
    assert throttle.admit(client) is None


# ---- the throttle on its own ----

def test_the_wait_doubles_after_each_wrong_password_then_the_client_is_locked_out():
    clock = Clock()
    throttle = LoginThrottle(clock)
    for n in range(1, MAX_FAILURES):
        fail(throttle)
        delay = FIRST_DELAY_S * 2 ** (n - 1)
        assert throttle.admit("a") == Wait(delay, False)  # refused, and not counted
        clock.advance(delay - 0.001)
        assert throttle.waiting("a") == Wait(pytest.approx(0.001), False)
        clock.advance(0.001)
    assert [FIRST_DELAY_S * 2 ** i for i in range(MAX_FAILURES - 1)] == [1, 2, 4, 8]
    fail(throttle)  # the MAX_FAILURES-th
    assert throttle.admit("a") == Wait(LOCKOUT_S, True)
    clock.advance(LOCKOUT_S - 1)
    assert throttle.admit("a") == Wait(1, True)
    clock.advance(1)
    fail(throttle)  # after the lockout the count starts again
    assert throttle.waiting("a") == Wait(FIRST_DELAY_S, False)


def test_the_wait_is_capped(monkeypatch):
    monkeypatch.setattr(login_throttle, "MAX_FAILURES", 20)
    clock = Clock()
    throttle = LoginThrottle(clock)
    waits = []
    for _ in range(12):
        fail(throttle)
        waits.append(throttle.waiting("a").seconds)
        clock.advance(waits[-1])
    assert max(waits) == MAX_DELAY_S and waits[:6] == [1, 2, 4, 8, 16, 30]


def test_old_wrong_passwords_stop_counting_and_success_forgets_them():
    clock = Clock()
    throttle = LoginThrottle(clock)
    for _ in range(MAX_FAILURES - 1):
        fail(throttle)
        clock.advance(throttle.waiting("a").seconds)
    clock.advance(WINDOW_S)
    fail(throttle)  # the earlier ones are out of the window: no lockout, the first wait again
    assert throttle.waiting("a") == Wait(FIRST_DELAY_S, False)
    clock.advance(FIRST_DELAY_S)
    assert throttle.admit("a") is None  # the right password this time
    throttle.succeeded("a")
    assert throttle.waiting("a") is None and len(throttle) == 0
    fail(throttle)
    assert throttle.waiting("a") == Wait(FIRST_DELAY_S, False)


def test_clients_are_counted_apart():
    clock = Clock()
    throttle = LoginThrottle(clock)
    for _ in range(MAX_FAILURES):
        fail(throttle, "a")
        clock.advance(60)
    assert throttle.admit("a").lockout
    assert throttle.admit("b") is None  # another client is not affected


def test_the_record_is_bounded():
    clock = Clock()
    throttle = LoginThrottle(clock, max_clients=100)
    for i in range(1000):
        fail(throttle, f"c{i}")
    assert len(throttle) == 100  # the longest quiet ones were forgotten
    assert throttle.waiting("c999") and throttle.waiting("c0") is None
    clock.advance(max(WINDOW_S, LOCKOUT_S))
    fail(throttle, "new")
    assert len(throttle) == 1  # records that neither block nor count any more are swept


def test_parallel_tries_from_one_client_get_one_check():
    throttle = LoginThrottle(Clock())
    start = threading.Barrier(32)
    admitted = []

    def try_once() -> None:
        start.wait()
        admitted.append(throttle.admit("a") is None)

    threads = [threading.Thread(target=try_once) for _ in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert admitted.count(True) == 1


def test_messages():
    assert login_throttle.message(Wait(11.2 * 60, True), "address") == \
        "Too many wrong passwords from this address; try again in 12 minutes."
    assert login_throttle.message(Wait(0.3, False), "browser session") == \
        "Too quick after a wrong password from this browser session; try again in 1 second."
    assert login_throttle.in_words(60) == "60 seconds" and login_throttle.in_words(61) == "61 seconds"
    assert login_throttle.in_words(90) == "2 minutes" and login_throttle.in_words(LOCKOUT_S) == "15 minutes"


class Context:
    """st.context with the client address set by the test (AppTest has no client connection)."""

    def __init__(self, real) -> None:
        self._real = real
        self.ip: str | None = None

    def __getattr__(self, name):
        return getattr(self._real, name)

    @property
    def ip_address(self) -> str | None:
        return self.ip


@pytest.fixture
def context(monkeypatch) -> Context:
    ctx = Context(streamlit.context)
    monkeypatch.setattr(streamlit, "context", ctx)
    return ctx


@pytest.mark.parametrize("ip, key", [
    ("203.0.113.7", "ip:203.0.113.7"),
    ("::ffff:203.0.113.7", "ip:203.0.113.7"),  # IPv4 seen through an IPv6 socket
    ("2001:db8:1:2:aaaa::1", "ip:2001:db8:1:2::/64"),  # a client owns its /64
    ("2001:db8:1:2:bbbb::9", "ip:2001:db8:1:2::/64"),
])
def test_clients_are_keyed_by_address(context, ip, key):
    context.ip = ip
    assert login_throttle.client() == (key, "address")


# ---- the login page (AppTest) ----

@pytest.fixture
def clock(monkeypatch, context) -> Clock:
    """A fake clock for a fresh process-wide throttle."""
    clock = Clock()
    monkeypatch.setattr(login_throttle, "THROTTLE", LoginThrottle(clock))
    return clock




def messages(at: AppTest) -> list[str]:
    return [e.value for e in at.error] + [w.value for w in at.warning]


def is_in(at: AppTest) -> bool:
    return bool(at.session_state["access_granted"]) if "access_granted" in at.session_state else False


def test_wrong_tries_are_refused_with_a_growing_wait(app_env, clock):
    at = locked_app()
    assert messages(log_in(at, "guess 1")) == ["Wrong password."]
    assert messages(log_in(at, PASSWORD)) == [  # too soon: not even the right password is checked
        "Too quick after a wrong password from this browser session; try again in 1 second."]
    assert not is_in(at)
    clock.advance(FIRST_DELAY_S)
    assert messages(log_in(at, "guess 2")) == ["Wrong password."]
    clock.advance(1)
    assert messages(log_in(at, "guess 3")) == [
        "Too quick after a wrong password from this browser session; try again in 1 second."]
    clock.advance(1)
    log_in(at, PASSWORD)
    assert is_in(at) and at.title[0].value == "Find citations for your draft"
    assert len(login_throttle.THROTTLE) == 0  # success forgets the failures


def test_a_lockout_refuses_even_the_right_password_until_it_ends(app_env, clock, context):
    context.ip = "198.51.100.4"
    at = locked_app()
    for i in range(MAX_FAILURES):
        shown = messages(log_in(at, f"guess {i}"))
        clock.advance(60)
    assert shown == ["Wrong password.", "Too many wrong passwords from this address; try again in 15 minutes."]
    assert messages(log_in(at, PASSWORD)) == [
        "Too many wrong passwords from this address; try again in 14 minutes."]
    other_tab = locked_app()  # a new browser session from the same address is locked out too
    assert messages(log_in(other_tab, PASSWORD))[0].startswith("Too many wrong passwords from this address")
    clock.advance(LOCKOUT_S - 60 - 30)
    assert messages(log_in(at, PASSWORD)) == [
        "Too many wrong passwords from this address; try again in 30 seconds."]
    assert not is_in(at) and not is_in(other_tab)
    clock.advance(30)
    log_in(at, PASSWORD)
    assert is_in(at) and at.title[0].value == "Find citations for your draft"


def test_two_clients_are_tracked_apart(app_env, clock, context):
    context.ip = "198.51.100.4"
    attacker = locked_app()
    for i in range(MAX_FAILURES):
        log_in(attacker, f"guess {i}")
        clock.advance(60)
    context.ip = "198.51.100.5"
    member = locked_app()
    assert messages(log_in(member, "typo")) == ["Wrong password."]  # checked, not refused
    clock.advance(FIRST_DELAY_S)
    log_in(member, PASSWORD)
    assert is_in(member)
    context.ip = "198.51.100.4"
    assert messages(log_in(attacker, PASSWORD))[0].startswith("Too many wrong passwords from this address")


def test_the_login_record_is_bounded(app_env, clock, context, monkeypatch):
    throttle = LoginThrottle(clock, max_clients=3)
    monkeypatch.setattr(login_throttle, "THROTTLE", throttle)
    at = locked_app()
    for i in range(6):
        context.ip = f"192.0.2.{i}"
        assert messages(log_in(at, "guess")) == ["Wrong password."]
    assert len(throttle) == 3 and sorted(throttle._records) == ["ip:192.0.2.3", "ip:192.0.2.4", "ip:192.0.2.5"]
