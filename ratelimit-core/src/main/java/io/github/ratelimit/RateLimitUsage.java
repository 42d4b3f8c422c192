package io.github.ratelimit;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.internal.core.UsageReports;

/**
 * Where a rate limited call says what it actually cost, for limits that reserve an
 * estimate when the call starts and settle the actual cost when it ends
 * ({@link RateLimited#estimate()}). A cost reported here wins over a response header
 * ({@link RateLimited#actualCostHeader()}) and over {@link RateLimited#actualCost()}; it
 * settles only the limits of the call that settle (those setting an estimate, an actual
 * cost or an actual cost header), never a limit counting requests beside them.
 * <p>
 * Blocking code (a servlet handler, a bean method that does not return a
 * {@code Mono} or a {@code CompletionStage}) reaches the usage of its call through
 * {@link #current()}; a handler method may also declare a parameter of this type.
 * Reactive code finds it in the Reactor {@code Context} under the key
 * {@code RateLimitUsage.class}:
 * <pre class="code">
 * Mono.deferContextual((context) -&gt; {
 *     RateLimitUsage usage = context.get(RateLimitUsage.class);
 *     return model.complete(prompt).doOnNext((answer) -&gt; usage.report(answer.totalTokens()));
 * });
 * </pre>
 * A call that throws or is cancelled settles the cost it reported before, if any, and
 * otherwise keeps its reservation. A stream (a {@code Flux}, a servlet
 * {@code SseEmitter} or {@code StreamingResponseBody}) settles when it ends, so it may
 * report a running total as it goes: a client that leaves early is charged what was
 * reported until then.
 */
public final class RateLimitUsage {

	private static final long UNREPORTED = -1;

	private static final ThreadLocal<RateLimitUsage> CURRENT = new ThreadLocal<>();

	/** The usage outside limited calls: its reports go nowhere. */
	private static final RateLimitUsage DETACHED = new RateLimitUsage();

	static {
		UsageReports.register(new Reports());
	}

	private volatile long reported = UNREPORTED;

	private RateLimitUsage() {
	}

	/**
	 * Reports the call's actual cost, in the units of the limits it settles; the last
	 * report wins.
	 * @param actualCost the actual cost, 0 or more; it may exceed what the call reserved
	 * @throws IllegalArgumentException when the cost is negative
	 */
	public void report(long actualCost) {
		if (actualCost < 0) {
			throw new IllegalArgumentException("actual cost must not be negative: " + actualCost);
		}
		if (this != DETACHED) {
			this.reported = actualCost;
		}
	}

	/**
	 * The usage of the innermost rate limited call running on this thread: a servlet
	 * handler's, or a blocking bean method's. Reactive code finds its usage in the Reactor
	 * context instead.
	 * @return the usage, or outside a limited call a usage whose reports go nowhere; never
	 * {@code null}
	 */
	public static RateLimitUsage current() {
		RateLimitUsage usage = CURRENT.get();
		return (usage != null) ? usage : DETACHED;
	}

	@Override
	public String toString() {
		long cost = this.reported;
		return "RateLimitUsage[" + ((this == DETACHED) ? "detached" : (cost < 0) ? "unreported" : cost) + "]";
	}

	/** What the limiter reads and does with usages, and nothing else may. */
	private static final class Reports implements UsageReports.Access {

		@Override
		public RateLimitUsage open() {
			return new RateLimitUsage();
		}

		@Override
		public long reported(RateLimitUsage usage) {
			return usage.reported;
		}

		@Override
		public @Nullable RateLimitUsage bind(@Nullable RateLimitUsage usage) {
			RateLimitUsage previous = CURRENT.get();
			if (usage != null) {
				CURRENT.set(usage);
			}
			else {
				CURRENT.remove();
			}
			return previous;
		}

	}

}
