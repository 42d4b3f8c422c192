package io.github.ratelimit.store;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * What a store says about itself, read by metrics, health and the actuator endpoint so
 * that none of them needs to know which classes stand behind the store.
 *
 * @param name the store's own name: {@code memory}, {@code redis}, or an application
 * store's name
 * @param deciding which store decides right now: the name, or {@code fallback} while a
 * local fallback stands in for a failing remote store
 * @param circuitBreaker state of the breaker guarding a remote store ({@code CLOSED},
 * {@code OPEN}, {@code HALF_OPEN}), or {@code null} when there is none
 * @param buckets the buckets the store keeps in local memory, by role
 */
public record StoreStatus(String name, String deciding, @Nullable String circuitBreaker, List<LocalBuckets> buckets) {

	public StoreStatus {
		Objects.requireNonNull(name, "name must not be null");
		Objects.requireNonNull(deciding, "deciding must not be null");
		buckets = List.copyOf(buckets);
	}

	/**
	 * The status of a store that always decides by itself and keeps nothing in memory.
	 * @param name the store name
	 * @return the status
	 */
	public static StoreStatus of(String name) {
		return new StoreStatus(name, name, null, List.of());
	}

	/**
	 * Whether a local fallback decides because the remote store is failing.
	 * @return whether the fallback is active
	 */
	public boolean fallbackActive() {
		return RateLimitResult.FALLBACK.equals(this.deciding);
	}

	/**
	 * Buckets kept in local memory.
	 *
	 * @param store the role of the memory holding them: {@code memory} for an in-memory
	 * store, {@code fallback} for the local fallback of a remote store
	 * @param count buckets kept now
	 * @param maximum the bound on the buckets kept
	 */
	public record LocalBuckets(String store, long count, long maximum) {
	}

}
