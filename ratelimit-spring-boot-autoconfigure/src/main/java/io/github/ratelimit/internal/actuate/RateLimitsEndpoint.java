package io.github.ratelimit.internal.actuate;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

import io.github.ratelimit.internal.core.Identities;
import io.github.ratelimit.internal.core.LimitDefinition;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.ResolvedLimit;
import io.github.ratelimit.internal.core.SettledCosts;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.StoreStatus;

/**
 * The {@code ratelimits} actuator endpoint: lists every effective limit with where each
 * value came from (and, for a limit that settles costs after the call, what its calls
 * reserved and were charged since start), shows one identity's bucket of a limit, and
 * resets it.
 * <p>
 * Limit names ({@code GET /orders/{id}}) and identities ({@code user:alice}) travel as
 * query parameters ({@code name}, {@code identity}) of the root operations, never as path
 * segments, since servlet containers and firewalls reject encoded slashes in paths. Like
 * every actuator endpoint, it is reachable over HTTP only when the application includes it
 * in {@code management.endpoints.web.exposure.include}, and only as far as the
 * application's security lets a caller.
 */
@Endpoint(id = "ratelimits")
public class RateLimitsEndpoint {

	private final LimitResolver resolver;

	private final RateLimitStore store;

	private final @Nullable OverloadStatus overload;

	private final SettledCosts settledCosts;

	/**
	 * Creates the endpoint.
	 * @param resolver knows every effective limit
	 * @param store holds the buckets
	 * @param overload overload protection, or {@code null} when it is not enabled
	 * @param settledCosts what calls of limits that settle reserved and were charged
	 */
	public RateLimitsEndpoint(LimitResolver resolver, RateLimitStore store, @Nullable OverloadStatus overload,
			SettledCosts settledCosts) {
		this.resolver = resolver;
		this.store = store;
		this.overload = overload;
		this.settledCosts = settledCosts;
	}

	/**
	 * Lists every limit when called without parameters; with a limit name and an identity,
	 * shows that identity's buckets of the limit (and of its candidate) without consuming
	 * anything.
	 * @param name the limit name, or {@code null} to list every limit
	 * @param identity the identity as the limiter forms it ({@code user:alice},
	 * {@code ip:203.0.113.7}), or {@code null} to list every limit
	 * @return the limits, or the buckets
	 */
	@ReadOperation
	public OperationResponseBody read(@Nullable String name, @Nullable String identity) {
		if (name == null && identity == null) {
			return limits();
		}
		if (name == null || identity == null || identity.isBlank()) {
			throw new InvalidEndpointRequestException("Both name and identity are needed to inspect a bucket",
					"Give both 'name' and 'identity' to inspect a bucket, or neither to list the limits");
		}
		String parsed = Identities.parse(identity);
		List<BucketDescriptor> buckets = new ArrayList<>(2);
		for (RateLimit limit : bucketsOf(name)) {
			buckets.add(BucketDescriptor.of(this.store.inspect(limit, parsed)));
		}
		return new IdentityDescriptor(name, parsed, buckets);
	}

	/**
	 * Forgets an identity's bucket of a limit (and of its candidate), so that its next
	 * request is admitted as if it were the first.
	 * @param name the limit name
	 * @param identity the identity as the limiter forms it
	 * @return what was reset
	 */
	@DeleteOperation
	public ResetDescriptor reset(String name, String identity) {
		if (identity.isBlank()) {
			throw new InvalidEndpointRequestException("The identity is blank", "Give the identity to reset");
		}
		String parsed = Identities.parse(identity);
		Map<String, Boolean> existed = new LinkedHashMap<>();
		for (RateLimit limit : bucketsOf(name)) {
			existed.put(limit.name(), this.store.reset(limit, parsed));
		}
		return new ResetDescriptor(name, parsed, existed);
	}

	/** Every place a limit is applied, and the policies no place uses, by limit name. */
	private LimitsDescriptor limits() {
		Map<String, List<ResolvedLimit>> byName = new LinkedHashMap<>();
		for (ResolvedLimit resolved : this.resolver.resolvedLimits()) {
			byName.computeIfAbsent(resolved.name(), (key) -> new ArrayList<>()).add(resolved);
		}
		for (String policy : this.resolver.policyNames()) {
			if (!byName.containsKey(policy)) {
				ResolvedLimit unused = this.resolver.policy(policy);
				if (unused != null) {
					byName.put(policy, List.of(unused));
				}
			}
		}
		List<LimitDescriptor> limits = new ArrayList<>(byName.size());
		byName.forEach((name, places) -> limits.add(LimitDescriptor.of(places,
				this.resolver.hasPolicy(name) ? LimitResolver.policyProperty(name) : null, this.settledCosts)));
		limits.sort(Comparator.comparing(LimitDescriptor::name));
		return new LimitsDescriptor(StoreDescriptor.of(this.store), limits,
				(this.overload != null) ? this.overload.describe() : null);
	}

	/** The limit of that name and its candidate, if it has one. */
	private List<RateLimit> bucketsOf(String name) {
		LimitDefinition definition = definition(name);
		if (definition == null) {
			throw new InvalidEndpointRequestException("No rate limit is named '" + name + "'",
					"No rate limit is named '" + name + "'; GET the endpoint without parameters to list them");
		}
		return (definition.candidate() != null) ? List.of(definition.limit(), definition.candidate())
				: List.of(definition.limit());
	}

	private LimitDefinition definition(String name) {
		for (ResolvedLimit resolved : this.resolver.resolvedLimits()) {
			if (resolved.name().equals(name)) {
				return resolved.definition();
			}
		}
		ResolvedLimit policy = this.resolver.policy(name);
		return (policy != null) ? policy.definition() : null;
	}

	private static long seconds(long micros) {
		return (micros + TimeUnit.SECONDS.toMicros(1) - 1) / TimeUnit.SECONDS.toMicros(1);
	}

	/**
	 * Every effective limit and the store holding their buckets.
	 *
	 * @param store the store
	 * @param limits the limits, by name
	 * @param overload overload protection, or {@code null} (left out) when it is not enabled
	 */
	public record LimitsDescriptor(StoreDescriptor store, List<LimitDescriptor> limits,
			OverloadStatus.@Nullable OverloadDescriptor overload) implements OperationResponseBody {
	}

	/**
	 * The store in use.
	 *
	 * @param type {@code memory}, {@code redis}, or the class of an application's own store
	 * @param active which store decides now: the type, or {@code fallback} while the local
	 * fallback stands in for a failing Redis
	 */
	public record StoreDescriptor(String type, String active) {

		static StoreDescriptor of(RateLimitStore store) {
			StoreStatus status = store.status();
			return new StoreDescriptor(status.name(), status.deciding());
		}

	}

	/**
	 * One limit and every place that applies it.
	 *
	 * @param name the limit name, which identifies its buckets
	 * @param id the limit's short id, which names its buckets in Redis keys
	 * ({@code ratelimit:{<identity>}:<id>})
	 * @param algorithm the algorithm
	 * @param capacity bucket size, or requests per window
	 * @param refillTokens tokens added per period
	 * @param period the period, as an ISO-8601 duration
	 * @param failMode what the limit does when its store fails
	 * @param shadow whether the limit only records what it would reject
	 * @param policy the policy property of the same name, or {@code null} when none is
	 * configured
	 * @param candidate the candidate evaluated beside the limit, or {@code null}
	 * @param plans by plan name, the values requests of that plan get instead, drawing
	 * from the same buckets; empty when the policy has no plans
	 * @param guards the places applying the limit; empty for a policy no place uses
	 * @param calendar the calendar unit of a calendar quota ({@code DAY}, {@code WEEK} or
	 * {@code MONTH}), whose windows turn over at local midnight; {@code null} otherwise
	 * @param timeZone the time zone of a calendar quota, such as {@code Europe/Berlin};
	 * {@code null} otherwise
	 * @param unit what the quota counts: {@code requests}, {@code concurrent-requests} or
	 * a unit of the application's such as {@code tokens}
	 * @param costs for a limit whose calls settle their cost after the call, what they
	 * reserved and were charged since start, in its unit; {@code null} for any other limit
	 */
	public record LimitDescriptor(String name, String id, String algorithm, long capacity, long refillTokens,
			String period, String failMode, boolean shadow, String policy, CandidateDescriptor candidate,
			Map<String, PlanDescriptor> plans, List<GuardDescriptor> guards, String calendar, String timeZone,
			String unit, @Nullable CostsDescriptor costs) {

		static LimitDescriptor of(List<ResolvedLimit> places, String policy, SettledCosts settledCosts) {
			ResolvedLimit first = places.get(0);
			RateLimit limit = first.definition().limit();
			List<GuardDescriptor> guards = new ArrayList<>(places.size());
			for (ResolvedLimit place : places) {
				if (!place.origin().equals(policy)) {
					guards.add(GuardDescriptor.of(place));
				}
			}
			RateLimit candidate = first.definition().candidate();
			Map<String, PlanDescriptor> plans = new TreeMap<>();
			first.definition().plans().forEach((plan, planLimit) -> plans.put(plan, PlanDescriptor.of(planLimit)));
			return new LimitDescriptor(limit.name(), limit.id(), limit.algorithm().name(), limit.capacity(),
					limit.refillTokens(), limit.period().toString(), limit.failMode().name(), limit.shadow(), policy,
					(candidate != null) ? CandidateDescriptor.of(candidate, policy) : null, plans, List.copyOf(guards),
					limit.isCalendar() ? limit.calendar().name() : null,
					limit.isCalendar() ? limit.timeZone().getId() : null, first.definition().unit(),
					settles(places) ? CostsDescriptor.of(settledCosts.of(limit.name())) : null);
		}

		/** Whether a place applies the limit with a cost settled after the call. */
		private static boolean settles(List<ResolvedLimit> places) {
			for (ResolvedLimit place : places) {
				if (place.definition().settles()) {
					return true;
				}
			}
			return false;
		}

	}

	/**
	 * What the calls of a limit that settles its cost after the call reserved and were
	 * charged since start, in the limit's unit; {@code reserved - returned + overdrawn =
	 * settled}. Counted when a call settles, so calls still running are not in it.
	 *
	 * @param calls calls settled
	 * @param reserved units they reserved when admitted
	 * @param settled units they were charged in the end: their actual costs
	 * @param returned units reserved beyond the actual cost, given back
	 * @param overdrawn units charged beyond the reservation
	 */
	public record CostsDescriptor(long calls, long reserved, long settled, long returned, long overdrawn) {

		static CostsDescriptor of(SettledCosts.Totals totals) {
			return new CostsDescriptor(totals.calls(), totals.reserved(), totals.settled(), totals.returned(),
					totals.overdrawn());
		}

	}

	/**
	 * The values of a limit for the requests of one plan, configured under
	 * {@code ratelimit.policies.<name>.plans.<plan>}.
	 *
	 * @param capacity the plan's capacity
	 * @param refillTokens the plan's tokens added per period
	 * @param period the plan's period, as an ISO-8601 duration
	 */
	public record PlanDescriptor(long capacity, long refillTokens, String period) {

		static PlanDescriptor of(RateLimit plan) {
			return new PlanDescriptor(plan.capacity(), plan.refillTokens(), plan.period().toString());
		}

	}

	/**
	 * A policy's candidate, evaluated beside it in shadow mode.
	 *
	 * @param name the candidate's bucket name
	 * @param id the candidate's short id, which names its buckets in Redis keys
	 * @param algorithm the algorithm
	 * @param capacity the capacity
	 * @param refillTokens tokens added per period
	 * @param period the period, as an ISO-8601 duration
	 * @param source the property configuring it
	 */
	public record CandidateDescriptor(String name, String id, String algorithm, long capacity, long refillTokens,
			String period, String source) {

		static CandidateDescriptor of(RateLimit candidate, String policy) {
			return new CandidateDescriptor(candidate.name(), candidate.id(), candidate.algorithm().name(),
					candidate.capacity(),
					candidate.refillTokens(), candidate.period().toString(), policy + ".candidate");
		}

	}

	/**
	 * One place applying a limit.
	 *
	 * @param origin the annotated method ({@code @RateLimited on …}) or the route property
	 * ({@code ratelimit.routes[0]})
	 * @param routes the routes guarded there, such as {@code GET /orders/{id}}
	 * @param cost quota units a request there pays
	 * @param key the key chain
	 * @param keyExpression the key expression, or {@code null}
	 * @param sources where each value came from, by property: {@code annotation}, the
	 * property that set it, or {@code default}
	 */
	public record GuardDescriptor(String origin, List<String> routes, long cost, List<String> key,
			String keyExpression, Map<String, String> sources) {

		static GuardDescriptor of(ResolvedLimit place) {
			LimitDefinition definition = place.definition();
			List<String> key = definition.key().stream().map((source) -> source.name().toLowerCase(Locale.ROOT)).toList();
			return new GuardDescriptor(place.origin(), place.routes(), definition.cost(), key,
					definition.keyExpression(), place.sources());
		}

	}

	/**
	 * An identity's buckets of a limit.
	 *
	 * @param name the limit name
	 * @param identity the identity, as the limiter forms it
	 * @param buckets the limit's bucket, then its candidate's
	 */
	public record IdentityDescriptor(String name, String identity, List<BucketDescriptor> buckets)
			implements OperationResponseBody {
	}

	/**
	 * One bucket as a request of cost 1 would find it now.
	 *
	 * @param name the bucket's limit name
	 * @param store which store answered: {@code memory}, {@code redis} or {@code fallback}
	 * @param exists whether the store holds state for it; without state the quota is whole
	 * @param limit the quota, as enforced by the store that answered
	 * @param remaining quota units available now
	 * @param reset seconds until more quota becomes available, rounded up
	 * @param retryAfter seconds until a request of cost 1 would be admitted, rounded up; 0
	 * when it would be admitted now
	 */
	public record BucketDescriptor(String name, String store, boolean exists, long limit, long remaining, long reset,
			long retryAfter) {

		static BucketDescriptor of(BucketSnapshot snapshot) {
			return new BucketDescriptor(snapshot.limit().name(), snapshot.store(), snapshot.exists(),
					snapshot.limit().capacity(), snapshot.remaining(), seconds(snapshot.resetMicros()),
					seconds(snapshot.retryAfterMicros()));
		}

	}

	/**
	 * What a reset forgot.
	 *
	 * @param name the limit name
	 * @param identity the identity, as the limiter forms it
	 * @param existed by bucket (the limit's, then its candidate's), whether the store held
	 * state for it
	 */
	public record ResetDescriptor(String name, String identity, Map<String, Boolean> existed)
			implements OperationResponseBody {
	}

}
