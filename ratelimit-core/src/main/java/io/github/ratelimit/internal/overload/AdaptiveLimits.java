package io.github.ratelimit.internal.overload;

import java.time.Duration;

/**
 * The algorithms an overload limit can learn with. The first is the default.
 */
public enum AdaptiveLimits {

	/**
	 * TCP Vegas applied to calls in flight: keeps the number of calls queued in the
	 * service, estimated from the no-load latency, between two small bounds.
	 */
	VEGAS,

	/**
	 * The ratio of the long-term to the current latency, after Netflix's Gradient2:
	 * tolerates latency up to 50% above its long-term level.
	 */
	GRADIENT2,

	/** Additive increase, multiplicative decrease on failures and slow calls. */
	AIMD;

	/**
	 * A new instance of the algorithm. Every algorithm shrinks the limit by 10% when a
	 * call fails with a sign of overload or is slower than {@code slowCall}.
	 * @param bounds where the limit starts and the range it stays in
	 * @param slowCall a call slower than this signals overload ({@code Duration.ZERO}: none)
	 * @return the algorithm
	 */
	public AdaptiveLimit create(LimitBounds bounds, Duration slowCall) {
		if (slowCall.isNegative()) {
			throw new IllegalArgumentException("slow-call must not be negative: " + slowCall);
		}
		long slowNanos = slowCall.toNanos();
		return switch (this) {
			case VEGAS -> new VegasLimit(bounds, slowNanos);
			case GRADIENT2 -> new Gradient2Limit(bounds, slowNanos);
			case AIMD -> new AimdLimit(bounds, 0.9, slowNanos);
		};
	}

}
