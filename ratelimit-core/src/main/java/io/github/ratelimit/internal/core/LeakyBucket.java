package io.github.ratelimit.internal.core;

import io.github.ratelimit.Algorithm;

/**
 * Leaky bucket as a queue: {@code capacity} places drained at the refill rate, kept as
 * the time the queue is empty again. An admitted request waits until the requests ahead
 * of it have drained (like nginx {@code limit_req} without {@code nodelay}); a request
 * that does not fit in the queue is rejected, so no request waits longer than
 * {@code capacity / rate}, unless it may reserve a later slot (a caller waiting for a
 * permit): it is then admitted when its drain slot comes within that wait.
 */
final class LeakyBucket extends TokenBucket {

	@Override
	public Algorithm algorithm() {
		return Algorithm.LEAKY_BUCKET;
	}

	@Override
	long delay(long start, long now) {
		return start - now;
	}

	@Override
	long reservedDelay(long start, long now, long wait) {
		return start - now;
	}

}
