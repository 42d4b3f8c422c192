package io.github.ratelimit.internal.overload;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

/**
 * Settings of an {@link OverloadLimiter}, started by {@link OverloadLimiter#builder}.
 */
public final class OverloadLimiterBuilder {

	final AdaptiveLimit algorithm;

	double criticalReserve = 0.2;

	double normalReserve = 0.1;

	boolean shadow;

	LongSupplier ticker = System::nanoTime;

	Duration criticalWait = Duration.ZERO;

	@Nullable WaitTimer timer;

	OverloadLimiterBuilder(AdaptiveLimit algorithm) {
		this.algorithm = algorithm;
	}

	/**
	 * The shares of the limit kept for higher priorities.
	 * @param critical the share only critical calls may fill
	 * @param normal the further share only normal and critical calls may fill
	 * @return this builder
	 */
	public OverloadLimiterBuilder reserves(double critical, double normal) {
		if (!(critical >= 0 && critical < 1)) {
			throw new IllegalArgumentException("critical-reserve must be at least 0 and below 1: " + critical);
		}
		if (!(normal >= 0 && critical + normal < 1)) {
			throw new IllegalArgumentException("normal-reserve must be at least 0 and leave a share for "
					+ "sheddable calls with critical-reserve (" + critical + "): " + normal);
		}
		this.criticalReserve = critical;
		this.normalReserve = normal;
		return this;
	}

	/**
	 * Whether calls over the limit are admitted and only counted.
	 * @param shadow whether to run in shadow mode
	 * @return this builder
	 */
	public OverloadLimiterBuilder shadow(boolean shadow) {
		this.shadow = shadow;
		return this;
	}

	/**
	 * The ticker that times calls.
	 * @param ticker nanoseconds from an arbitrary origin
	 * @return this builder
	 */
	public OverloadLimiterBuilder ticker(LongSupplier ticker) {
		this.ticker = Objects.requireNonNull(ticker, "ticker");
		return this;
	}

	/**
	 * How long a critical call that finds the limit full may wait for a place.
	 * @param criticalWait the wait, {@link Duration#ZERO} for none (the default)
	 * @return this builder
	 */
	public OverloadLimiterBuilder criticalWait(Duration criticalWait) {
		Objects.requireNonNull(criticalWait, "criticalWait");
		if (criticalWait.isNegative()) {
			throw new IllegalArgumentException("critical-wait must not be negative: " + criticalWait);
		}
		this.criticalWait = criticalWait;
		return this;
	}

	/**
	 * The timer that ends asynchronous waits; by default the limiter starts one thread
	 * for them on the first wait, and {@link OverloadLimiter#close()} stops it.
	 * @param timer the timer
	 * @return this builder
	 */
	public OverloadLimiterBuilder timer(WaitTimer timer) {
		this.timer = Objects.requireNonNull(timer, "timer");
		return this;
	}

	/**
	 * Builds the limiter.
	 * @return the limiter
	 */
	public OverloadLimiter build() {
		return new OverloadLimiter(this);
	}

}
