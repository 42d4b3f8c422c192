package io.github.ratelimit.internal.metrics;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreStatus;

/**
 * Micrometer meters of the limiter:
 * <ul>
 * <li>{@code ratelimit.requests} (counter; tags {@code limit}, {@code result}, {@code store} =
 * memory | redis | fallback): one per limit decided for a request. {@code result} is
 * {@code allowed} when the limit admitted the request and was charged its cost,
 * {@code not_charged} when it would have admitted it but another limit decided with it
 * rejected the request (so it was charged nothing), {@code rejected} when it turned the
 * request away, and {@code shadow_rejected} when a shadow limit would have;</li>
 * <li>{@code ratelimit.refunds} (counter; tags {@code limit}, {@code store}): charges counted as
 * {@code allowed} that were given back later, because a later stage of the request
 * rejected it or a caller waiting for its slot was gone; {@code allowed} minus
 * {@code refunds} is what stayed charged;</li>
 * <li>{@code ratelimit.store.latency} (timer; tag {@code store}): time to decide the
 * limits of a request, by the store that decided: every decision of a remote store, one
 * in {@value RateLimitObserver#MEMORY_TIMED_ONE_IN} of an in-memory store, at random (its
 * decisions take about what reading the clock does; {@code ratelimit.requests} counts
 * them all);</li>
 * <li>{@code ratelimit.store.errors} (counter; tag {@code store}): failed or timed-out calls
 * to the remote store;</li>
 * <li>{@code ratelimit.fallback.active} (gauge, 0 or 1): the local fallback is deciding;</li>
 * <li>{@code ratelimit.buckets} and {@code ratelimit.buckets.max} (gauges; tag
 * {@code store} = memory | fallback): buckets kept in memory and their bound;</li>
 * <li>{@code ratelimit.cost.reserved}, {@code ratelimit.cost.settled},
 * {@code ratelimit.cost.returned} and {@code ratelimit.cost.overdrawn} (counters; tags
 * {@code limit}, {@code store}; base unit the limit's unit, such as {@code tokens}): for
 * limits that settle their cost after the call only, counted when a call settles: the
 * units it had reserved, its actual cost, the units reserved beyond it and given back, and
 * the units charged beyond the reservation
 * ({@code reserved - returned + overdrawn = settled}).</li>
 * </ul>
 * Tag values come from configuration only (limit names are policy names or route
 * templates): never an identity, an address or a raw path.
 */
public final class RateLimitMetrics implements RateLimitObserver {

	private final MeterRegistry registry;

	/** The {@code result} tag of {@code ratelimit.requests}, by the index {@link #outcome} returns. */
	private static final String[] OUTCOMES = { "allowed", "not_charged", "shadow_rejected", "rejected" };

	/** Counters of {@code ratelimit.requests} by limit, then store, then outcome index. */
	private final Map<String, LimitCounters> requests = new ConcurrentHashMap<>();

	private final Map<String, Timer> latencies = new ConcurrentHashMap<>();

	/**
	 * The latency timer of the store that decided last: nearly always the one store there
	 * is, found without a lookup on every decision.
	 */
	private volatile StoreTimer lastLatency;

	/** Slots of {@link #lastCounters}; a power of two. */
	private static final int COUNTER_SLOTS = 64;

	/**
	 * The {@code ratelimit.requests} counters of the limit and store counted last, in the
	 * slot of the limit name's hash: a limit's decisions find their counters without a map
	 * lookup, and limits of one request sit in different slots unless their hashes collide.
	 * Racy on purpose: a slot holds an immutable triple, checked before it is used.
	 */
	private final LastCounters[] lastCounters = new LastCounters[COUNTER_SLOTS];

	private final Map<RequestKey, Counter> refunds = new ConcurrentHashMap<>();

	private final Map<RequestKey, Counter> divergences = new ConcurrentHashMap<>();

	private final Map<String, Counter> errors = new ConcurrentHashMap<>();

	/** The {@code ratelimit.cost.*} counters of limits that settle, by limit and store. */
	private final Map<RequestKey, CostCounters> costs = new ConcurrentHashMap<>();

	private final Function<String, @Nullable String> unitOf;

	/**
	 * Creates the meters.
	 * @param registry the registry
	 * @param store supplies the configured store, looked up when a gauge is read
	 * @param unitOf the unit a limit's quota counts, by limit name, or {@code null} for
	 * {@code requests}; asked once per limit whose calls settle, for the base unit of its
	 * cost meters
	 */
	public RateLimitMetrics(MeterRegistry registry, Supplier<RateLimitStore> store,
			Function<String, @Nullable String> unitOf) {
		this.registry = registry;
		this.unitOf = unitOf;
		Gauge.builder("ratelimit.fallback.active", store, (supplier) -> fallbackActive(supplier.get()) ? 1 : 0)
			.description("Whether the local fallback decides because the remote store is failing (0 or 1)")
			.strongReference(true)
			.register(registry);
		for (String name : new String[] { RateLimitResult.MEMORY, RateLimitResult.FALLBACK }) {
			Gauge.builder("ratelimit.buckets", store, (supplier) -> buckets(supplier.get(), name, false))
				.description("Buckets kept in memory")
				.tag("store", name)
				.strongReference(true)
				.register(registry);
			Gauge.builder("ratelimit.buckets.max", store, (supplier) -> buckets(supplier.get(), name, true))
				.description("Bound on the buckets kept in memory")
				.tag("store", name)
				.strongReference(true)
				.register(registry);
		}
	}

	@Override
	public void decided(RateLimitResult result, long nanos) {
		// the timer exists from the first decision, timed or not, so that rules finding it do
		Timer latency = latency(result.store());
		if (nanos != UNTIMED) {
			latency.record(nanos, TimeUnit.NANOSECONDS);
		}
		// all-or-nothing: an admitting decision charged its limit only if no limit rejected
		boolean charged = result.allowed();
		List<RateLimitDecision> decisions = result.decisions();
		boolean candidates = false;
		for (int i = 0; i < decisions.size(); i++) {
			RateLimitDecision decision = decisions.get(i);
			requestCounter(decision.limit().name(), outcome(decision, charged), result.store()).increment();
			candidates |= decision.limit().isCandidate();
		}
		if (candidates) {
			countDivergences(result);
		}
	}

	/** One limit decided in place: counted as the list path counts it, allocating nothing. */
	@Override
	public void decided(RateLimit limit, String identity, long cost, MutableDecision decision, long nanos) {
		Timer latency = latency(decision.store());
		if (nanos != UNTIMED) {
			latency.record(nanos, TimeUnit.NANOSECONDS);
		}
		// one decision: it charged its limit when it admitted the request; a candidate alone
		// has no enforced decision to diverge from
		int outcome = decision.allowed() ? 0 : decision.limit().shadow() ? 2 : 3;
		requestCounter(decision.limit().name(), outcome, decision.store()).increment();
	}

	@Override
	public void refunded(List<Acquisition> acquisitions, RateLimitResult decided) {
		for (Acquisition acquisition : acquisitions) {
			this.refunds.computeIfAbsent(new RequestKey(acquisition.limit().name(), "", decided.store()),
					(key) -> Counter.builder("ratelimit.refunds")
						.description("Admissions whose charge was given back: the request was rejected later, "
								+ "or its caller was gone")
						.tag("limit", key.limit())
						.tag("store", key.store())
						.register(this.registry))
				.increment();
		}
	}

	/**
	 * Counts what settled calls reserved and were charged, in their limits' units. Only
	 * settling calls get here, so ordinary limits have no cost meters.
	 */
	@Override
	public void settled(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		for (int i = 0; i < reserved.size(); i++) {
			Acquisition acquisition = reserved.get(i);
			this.costs
				.computeIfAbsent(new RequestKey(acquisition.limit().name(), "", decided.store()), this::costCounters)
				.add(acquisition.cost(), actualCosts[i]);
		}
	}

	private CostCounters costCounters(RequestKey key) {
		String unit = this.unitOf.apply(key.limit());
		String baseUnit = (unit != null) ? unit : "requests";
		return new CostCounters(
				costCounter("ratelimit.cost.reserved", "Units reserved by calls that settled", key, baseUnit),
				costCounter("ratelimit.cost.settled", "Units settled calls were charged: their actual costs", key, baseUnit),
				costCounter("ratelimit.cost.returned", "Units reserved beyond the actual cost and given back", key,
						baseUnit),
				costCounter("ratelimit.cost.overdrawn", "Units charged beyond what calls reserved", key, baseUnit));
	}

	private Counter costCounter(String name, String description, RequestKey key, String baseUnit) {
		return Counter.builder(name)
			.description(description)
			.baseUnit(baseUnit)
			.tag("limit", key.limit())
			.tag("store", key.store())
			.register(this.registry);
	}

	/** The {@code result} tag of a decision; {@code charged} when no limit rejected the request. */
	private static int outcome(RateLimitDecision decision, boolean charged) {
		if (decision.allowed()) {
			return charged ? 0 : 1;
		}
		return decision.limit().shadow() ? 2 : 3;
	}

	/** The latency timer of a store: the last one used, else looked up and kept. */
	private Timer latency(String store) {
		StoreTimer last = this.lastLatency;
		if (last != null && last.store().equals(store)) {
			return last.timer();
		}
		Timer latency = this.latencies.computeIfAbsent(store, (name) -> Timer.builder("ratelimit.store.latency")
			.description("Time the rate limit store took to decide a request")
			.tag("store", name)
			.register(this.registry));
		this.lastLatency = new StoreTimer(store, latency);
		return latency;
	}

	/**
	 * The counter of a limit's decisions with an outcome in a store. Looked up by the
	 * limit's and the store's names, which every decision carries as the same strings, so
	 * counting a decision allocates nothing once its counter exists.
	 */
	private Counter requestCounter(String limit, int outcome, String store) {
		int slot = limit.hashCode() & (COUNTER_SLOTS - 1);
		LastCounters last = this.lastCounters[slot];
		AtomicReferenceArray<Counter> counters;
		if (last != null && last.limit() == limit && last.store() == store) {
			counters = last.counters();
		}
		else {
			counters = countersOf(limit, store);
			this.lastCounters[slot] = new LastCounters(limit, store, counters);
		}
		Counter counter = counters.get(outcome);
		if (counter == null) {
			// registering is idempotent: a racing thread gets the same counter from the registry
			counter = Counter.builder("ratelimit.requests")
				.description("Requests decided by a rate limit")
				.tag("limit", limit)
				.tag("result", OUTCOMES[outcome])
				.tag("store", store)
				.register(this.registry);
			counters.set(outcome, counter);
		}
		return counter;
	}

	/** The counters of a limit's decisions in a store, by outcome index. */
	private AtomicReferenceArray<Counter> countersOf(String limit, String store) {
		LimitCounters byStore = this.requests.get(limit);
		if (byStore == null) {
			// the first store to decide the limit gets its counters without a second lookup
			byStore = this.requests.computeIfAbsent(limit, (name) -> new LimitCounters(store));
		}
		return byStore.of(store);
	}

	/** Counts where a candidate and its enforced limit decided differently for one request. */
	private void countDivergences(RateLimitResult result) {
		for (RateLimitDecision candidate : result.decisions()) {
			if (!candidate.limit().isCandidate()) {
				continue;
			}
			String name = candidate.limit().name();
			String enforcedName = name.substring(0, name.length() - RateLimit.CANDIDATE_SUFFIX.length());
			for (RateLimitDecision enforced : result.decisions()) {
				if (enforced.limit().name().equals(enforcedName) && enforced.allowed() != candidate.allowed()) {
					String direction = enforced.allowed() ? "newly_rejected" : "newly_allowed";
					this.divergences.computeIfAbsent(new RequestKey(enforcedName, direction, ""),
							(key) -> Counter.builder("ratelimit.shadow.divergence")
								.description("Requests a policy's candidate would decide differently from the policy")
								.tag("limit", key.limit())
								.tag("direction", key.result())
								.register(this.registry))
						.increment();
				}
			}
		}
	}

	@Override
	public void storeFailed(String store, Throwable failure) {
		this.errors.computeIfAbsent(store, (name) -> Counter.builder("ratelimit.store.errors")
			.description("Failed or timed-out calls to the rate limit store")
			.tag("store", name)
			.register(this.registry)).increment();
	}

	private static boolean fallbackActive(RateLimitStore store) {
		return store != null && store.status().fallbackActive();
	}

	/** Buckets kept in memory in the given role ({@code memory} or {@code fallback}), 0 when none. */
	private static double buckets(RateLimitStore store, String role, boolean bound) {
		if (store == null) {
			return 0;
		}
		for (StoreStatus.LocalBuckets kept : store.status().buckets()) {
			if (kept.store().equals(role)) {
				return bound ? kept.maximum() : kept.count();
			}
		}
		return 0;
	}

	private record RequestKey(String limit, String result, String store) {
	}

	/** The counters of one limit in one store, with the names they were found by. */
	private record LastCounters(String limit, String store, AtomicReferenceArray<Counter> counters) {
	}

	/** The cost counters of one limit in one store. */
	private record CostCounters(Counter reserved, Counter settled, Counter returned, Counter overdrawn) {

		void add(long reservedCost, long actualCost) {
			this.reserved.increment(reservedCost);
			this.settled.increment(actualCost);
			if (actualCost < reservedCost) {
				this.returned.increment(reservedCost - actualCost);
			}
			else if (actualCost > reservedCost) {
				this.overdrawn.increment(actualCost - reservedCost);
			}
		}

	}

	/** A store's latency timer. */
	private record StoreTimer(String store, Timer timer) {
	}

	/**
	 * The {@code ratelimit.requests} counters of one limit by outcome index: those of the
	 * store that decided it first in a field, those of any other store (a fallback) in a
	 * map.
	 */
	private static final class LimitCounters {

		private final String store;

		private final AtomicReferenceArray<Counter> counters = new AtomicReferenceArray<>(OUTCOMES.length);

		private final Map<String, AtomicReferenceArray<Counter>> otherStores = new ConcurrentHashMap<>(2);

		LimitCounters(String store) {
			this.store = store;
		}

		AtomicReferenceArray<Counter> of(String store) {
			return this.store.equals(store) ? this.counters
					: this.otherStores.computeIfAbsent(store, (name) -> new AtomicReferenceArray<>(OUTCOMES.length));
		}

	}

}
