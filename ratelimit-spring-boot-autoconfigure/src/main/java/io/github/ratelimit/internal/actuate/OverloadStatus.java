package io.github.ratelimit.internal.actuate;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.OverloadLimiter;

/**
 * What the {@code ratelimits} endpoint shows of overload protection when it is enabled.
 */
public final class OverloadStatus {

	private final OverloadLimiter limiter;

	private final String algorithm;

	/**
	 * Creates the status.
	 * @param limiter the limiter
	 * @param algorithm the name of the algorithm that learns its limit
	 */
	public OverloadStatus(OverloadLimiter limiter, String algorithm) {
		this.limiter = limiter;
		this.algorithm = algorithm;
	}

	/**
	 * The limiter as it is now.
	 * @return the description
	 */
	public OverloadDescriptor describe() {
		Map<String, Long> shed = new LinkedHashMap<>();
		for (RequestPriority priority : RequestPriority.values()) {
			shed.put(priority.name().toLowerCase(Locale.ROOT), this.limiter.shed(priority));
		}
		return new OverloadDescriptor(true, this.limiter.shadow(), this.algorithm, this.limiter.limit(),
				this.limiter.inFlight(), shed);
	}

	/**
	 * Overload protection as it is now.
	 *
	 * @param enabled whether it is enabled: always, when shown
	 * @param shadow whether requests over the limit are admitted and only counted
	 * @param algorithm the algorithm that learns the limit
	 * @param limit the current limit on calls in flight
	 * @param inFlight the calls in flight now
	 * @param shed by priority, the requests turned away (in shadow mode: that would have
	 * been) since the start
	 */
	public record OverloadDescriptor(boolean enabled, boolean shadow, String algorithm, int limit, int inFlight,
			Map<String, Long> shed) {
	}

}
