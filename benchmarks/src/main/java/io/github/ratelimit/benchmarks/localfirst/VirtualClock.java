package io.github.ratelimit.benchmarks.localfirst;

import io.github.ratelimit.internal.core.RateLimitClock;

/**
 * A clock that only moves when the simulation moves it, so that every store of a simulated
 * fleet, and the exact store beside it, decide at the same instants.
 */
final class VirtualClock implements RateLimitClock {

	private long nowMicros;

	VirtualClock(long startMicros) {
		this.nowMicros = startMicros;
	}

	@Override
	public long nowMicros() {
		return this.nowMicros;
	}

	void set(long micros) {
		this.nowMicros = micros;
	}

}
