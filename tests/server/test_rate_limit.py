"""RateLimiter: a token bucket per key (each user, each client's logins and failed authentications)."""

from __future__ import annotations

from sessionflow_server._limits import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_goes_at_once_then_the_next_waits_one_refill() -> None:
    clock = Clock()
    limiter = RateLimiter(per_second=2.0, burst=3, clock=clock)
    assert [limiter.take("k") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("k") == 0.5  # (1 - 0 tokens) / 2 per second
    assert limiter.take("other") == 0.0  # keys have buckets of their own


def test_the_bucket_refills_at_the_rate_up_to_the_burst() -> None:
    clock = Clock()
    limiter = RateLimiter(per_second=2.0, burst=3, clock=clock)
    for _ in range(3):
        limiter.take("k")
    clock.now += 0.25  # half a token back
    assert limiter.take("k") == 0.25
    clock.now += 0.25  # now exactly one
    assert limiter.take("k") == 0.0
    assert limiter.take("k") == 0.5
    clock.now += 100.0  # refilled, but never past the burst
    assert [limiter.take("k") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("k") > 0.0


def test_a_zero_rate_waits_an_hour() -> None:
    limiter = RateLimiter(per_second=0.0, burst=1, clock=Clock())
    assert limiter.take("k") == 0.0
    assert limiter.take("k") == 3600.0


def test_defaults_are_twenty_a_second_and_sixty_at_once() -> None:
    limiter = RateLimiter(clock=Clock())
    assert (limiter.per_second, limiter.burst) == (20.0, 60)
    assert [limiter.take("k") for _ in range(60)] == [0.0] * 60
    assert limiter.take("k") == 1 / 20.0


def test_a_bucket_that_has_refilled_completely_is_forgotten() -> None:
    clock = Clock()
    limiter = RateLimiter(per_second=1.0, burst=2, clock=clock)
    for index in range(500):
        limiter.take(f"idle-{index}")
    assert len(limiter) == 500
    clock.now += 1.0  # half refilled: kept
    limiter.take("busy")
    assert len(limiter) == 501
    clock.now += 1.5  # 2.5 s since the idle ones: full again, the same as fresh
    limiter.take("busy")
    assert len(limiter) == 1


def test_past_max_keys_the_least_recently_used_bucket_goes() -> None:
    clock = Clock()
    limiter = RateLimiter(per_second=1.0, burst=2, clock=clock, max_keys=3)
    for key in ("a", "b", "c"):
        limiter.take(key)
    limiter.take("a")  # used again: now the most recent
    assert limiter.take("a") == 1.0  # and empty
    limiter.take("d")  # a fourth key: "b", the least recently used, goes
    assert len(limiter) == 3
    assert limiter.take("a") == 1.0  # still remembered as empty
    assert limiter.take("b") == 0.0  # forgotten: fresh
    assert limiter.take("b") == 0.0


def test_by_default_ten_thousand_keys_are_kept() -> None:
    clock = Clock()
    limiter = RateLimiter(per_second=1.0, burst=1, clock=clock)
    for index in range(10_000):
        assert limiter.take(f"key-{index}") == 0.0
    assert len(limiter) == 10_000
    assert limiter.take("key-0") == 1.0  # all 10,000 remembered: the first is still empty
    limiter.take("key-10000")  # one more: the least recently used, key-1, goes
    assert len(limiter) == 10_000
    assert limiter.take("key-1") == 0.0  # forgotten: a fresh bucket
    assert limiter.take("key-0") == 1.0


def test_a_bucket_is_forgotten_once_its_refill_time_burst_over_rate_has_passed() -> None:
    clock = Clock()
    limiter = RateLimiter(per_second=2.0, burst=3, clock=clock)  # refilled in 3 / 2 = 1.5 s
    assert limiter.refill_seconds == 1.5
    limiter.take("idle")
    clock.now += 1.4
    limiter.take("busy")
    assert len(limiter) == 2
    clock.now += 0.1  # 1.5 s since "idle" was used, 0.1 s since "busy"
    limiter.take("new")
    assert len(limiter) == 2  # "busy" and "new"


def test_buckets_are_swept_at_most_once_per_refill_time() -> None:
    clock = Clock()
    limiter = RateLimiter(per_second=1.0, burst=2, clock=clock)  # refilled in 2 s
    limiter.take("a")  # t=0: the first sweep; the next is due at t=2
    clock.now += 1.0
    limiter.take("b")
    clock.now += 1.0  # t=2: a sweep drops "a" (full again), keeps "b"
    limiter.take("c")
    assert len(limiter) == 2
    clock.now += 1.0  # t=3: "b" is full again, but the next sweep is only due at t=4
    limiter.take("d")
    assert len(limiter) == 3
    clock.now += 1.0  # t=4: "b" and "c" go
    limiter.take("e")
    assert len(limiter) == 2  # "d" and "e"


def test_at_a_zero_rate_a_bucket_is_forgotten_after_an_hour() -> None:
    clock = Clock()
    limiter = RateLimiter(per_second=0.0, burst=1, clock=clock)
    assert limiter.refill_seconds == 3600.0
    assert limiter.take("early") == 0.0
    clock.now += 3599.5
    assert limiter.take("late") == 0.0
    assert len(limiter) == 2  # "early" is still remembered, and empty
    clock.now += 0.5  # an hour since "early"
    assert limiter.take("late") == 3600.0
    assert len(limiter) == 1
    assert limiter.take("early") == 0.0  # forgotten: a fresh bucket
