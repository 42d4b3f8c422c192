package io.github.ratelimit.internal.metrics;

import java.util.Locale;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.OverloadLimiter;
import io.github.ratelimit.internal.overload.ShedReason;

/**
 * Micrometer meters of overload protection, read from the limiter when scraped:
 * <ul>
 * <li>{@code ratelimit.overload.limit} (gauge): the current limit on calls in flight;</li>
 * <li>{@code ratelimit.overload.in.flight} (gauge): the calls in flight now;</li>
 * <li>{@code ratelimit.overload.shed} (counter; tags {@code priority} = critical | normal |
 * sheddable, {@code reason} = limit | queue | wait, {@code result} = shed, or shadow_shed
 * in shadow mode where the requests were admitted anyway): requests over their priority's
 * share of the limit, once each; {@code reason} says why: the share was full ({@code limit}),
 * or, for a critical request, as many critical requests already waited as the limit allows
 * ({@code queue}), or it waited the critical wait and no place came ({@code wait});</li>
 * <li>{@code ratelimit.overload.waited} (counter; tag {@code result} = admitted | shed):
 * critical requests that found the limit full and waited for a place, by how the wait
 * ended.</li>
 * </ul>
 */
public final class OverloadMetrics {

	/**
	 * Registers the meters.
	 * @param registry the registry
	 * @param limiter the limiter the meters read
	 */
	public OverloadMetrics(MeterRegistry registry, OverloadLimiter limiter) {
		Gauge.builder("ratelimit.overload.limit", limiter, OverloadLimiter::limit)
			.description("Current adaptive limit on calls in flight")
			.strongReference(true)
			.register(registry);
		Gauge.builder("ratelimit.overload.in.flight", limiter, OverloadLimiter::inFlight)
			.description("Calls in flight under the overload limit")
			.strongReference(true)
			.register(registry);
		String result = limiter.shadow() ? "shadow_shed" : "shed";
		for (RequestPriority priority : RequestPriority.values()) {
			for (ShedReason reason : ShedReason.values()) {
				// only critical requests wait, so only they are turned away by the queue or the wait
				if (reason == ShedReason.LIMIT || priority == RequestPriority.CRITICAL) {
					FunctionCounter
						.builder("ratelimit.overload.shed", limiter, (counted) -> counted.shed(priority, reason))
						.description("Requests over their priority's share of the overload limit")
						.tag("priority", priority.name().toLowerCase(Locale.ROOT))
						.tag("reason", reason.name().toLowerCase(Locale.ROOT))
						.tag("result", result)
						.register(registry);
				}
			}
		}
		for (boolean admitted : new boolean[] { true, false }) {
			FunctionCounter.builder("ratelimit.overload.waited", limiter, (counted) -> counted.waited(admitted))
				.description("Critical requests that waited for a place in the overload limit")
				.tag("result", admitted ? "admitted" : "shed")
				.register(registry);
		}
	}

}
