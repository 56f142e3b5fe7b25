"""RateLimiter: a token bucket per key (each bearer token, and the login route)."""

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


def test_past_ten_thousand_keys_the_full_buckets_are_forgotten_first() -> None:
    clock = Clock()
    limiter = RateLimiter(per_second=1.0, burst=2, clock=clock)
    for index in range(10_000):
        limiter.take(f"idle-{index}")  # one of two tokens used: 1.0 left
    limiter.take("busy")
    limiter.take("busy")
    assert limiter.take("busy") == 1.0  # empty: a refusal, which prunes past 10,000 keys
    # Buckets with at least burst - 1 tokens left are dropped; the empty one is kept.
    assert limiter.take("busy") == 1.0
    assert limiter.take("idle-0") == 0.0  # forgotten: a full bucket again
    assert limiter.take("idle-0") == 0.0
    assert limiter.take("idle-0") > 0.0


def test_ten_thousand_keys_are_all_kept() -> None:
    limiter = RateLimiter(per_second=1.0, burst=2, clock=Clock())
    for index in range(9_999):
        limiter.take(f"idle-{index}")
    limiter.take("busy")
    limiter.take("busy")
    assert limiter.take("busy") == 1.0  # a refusal with exactly 10,000 keys: nothing pruned
    assert limiter.take("idle-0") == 0.0  # its one token left
    assert limiter.take("idle-0") == 1.0
