package io.github.ratelimit.internal.core;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.RateLimitUsage;

/**
 * Opens the {@link RateLimitUsage} of a call, reads what it reported and makes it the
 * current usage of a thread: what the limiter needs of a usage beyond its public
 * methods, which {@link RateLimitUsage} hands over when it is loaded.
 */
public final class UsageReports {

	/** Returned by {@link #reported} when the call reported nothing. */
	public static final long UNREPORTED = -1;

	/** Set once, by {@link RateLimitUsage} as it is initialised. */
	private static volatile @Nullable Access access;

	private UsageReports() {
	}

	/**
	 * A new usage for one call, with nothing reported.
	 * @return the usage
	 */
	public static RateLimitUsage open() {
		return access().open();
	}

	/**
	 * The cost a call reported last.
	 * @param usage the call's usage
	 * @return the cost, or {@link #UNREPORTED}
	 */
	public static long reported(RateLimitUsage usage) {
		return access().reported(usage);
	}

	/**
	 * Makes a usage the one {@link RateLimitUsage#current()} answers on this thread.
	 * @param usage the usage, or {@code null} for none
	 * @return the usage it replaces, to give back to this method when the call ends
	 */
	public static @Nullable RateLimitUsage bind(@Nullable RateLimitUsage usage) {
		return access().bind(usage);
	}

	/**
	 * Takes the access {@link RateLimitUsage} grants; only the first registration counts.
	 * @param granted the access
	 */
	public static synchronized void register(Access granted) {
		if (access == null) {
			access = granted;
		}
	}

	private static Access access() {
		Access granted = access;
		if (granted == null) {
			// loading the class registers its access
			RateLimitUsage.current();
			granted = access;
		}
		return granted;
	}

	/** What {@link RateLimitUsage} grants the limiter. */
	public interface Access {

		/**
		 * A new usage.
		 * @return the usage
		 */
		RateLimitUsage open();

		/**
		 * The cost last reported.
		 * @param usage the usage
		 * @return the cost, or {@link #UNREPORTED}
		 */
		long reported(RateLimitUsage usage);

		/**
		 * Makes a usage current on this thread.
		 * @param usage the usage, or {@code null} for none
		 * @return the usage it replaces
		 */
		@Nullable RateLimitUsage bind(@Nullable RateLimitUsage usage);

	}

}
