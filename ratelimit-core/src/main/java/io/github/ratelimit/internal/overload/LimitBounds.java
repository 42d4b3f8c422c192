package io.github.ratelimit.internal.overload;

/**
 * Where an adaptive limit starts and the range it stays in.
 *
 * @param initial the limit before anything is learned
 * @param min the lowest limit, at least 1
 * @param max the highest limit
 */
public record LimitBounds(int initial, int min, int max) {

	public LimitBounds {
		if (min < 1) {
			throw new IllegalArgumentException("min-limit must be at least 1: " + min);
		}
		if (max < min) {
			throw new IllegalArgumentException("max-limit must be at least min-limit (" + min + "): " + max);
		}
		if (initial < min || initial > max) {
			throw new IllegalArgumentException(
					"initial-limit must be between min-limit and max-limit (" + min + ".." + max + "): " + initial);
		}
	}

	/**
	 * A limit brought into the range.
	 * @param limit the limit
	 * @return the limit, at least {@code min} and at most {@code max}
	 */
	public double clamp(double limit) {
		return Math.max(this.min, Math.min(this.max, limit));
	}

}
