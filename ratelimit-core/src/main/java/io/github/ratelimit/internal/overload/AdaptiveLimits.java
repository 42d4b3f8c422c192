package io.github.ratelimit.internal.overload;

import java.time.Duration;

/**
 * The algorithms an overload limit can learn with.
 */
public enum AdaptiveLimits {

	/** Additive increase, multiplicative decrease on failures and slow calls. */
	AIMD;

	/**
	 * A new instance of the algorithm.
	 * @param bounds where the limit starts and the range it stays in
	 * @param slowCall a call slower than this signals overload ({@code Duration.ZERO}: none)
	 * @return the algorithm
	 */
	public AdaptiveLimit create(LimitBounds bounds, Duration slowCall) {
		return switch (this) {
			case AIMD -> new AimdLimit(bounds, 0.9, slowCall.toNanos());
		};
	}

}
