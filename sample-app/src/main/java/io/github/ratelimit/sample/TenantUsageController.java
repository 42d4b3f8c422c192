package io.github.ratelimit.sample;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimited;

/**
 * Usage of a tenant's plan, limited per tenant (the {@code X-Tenant-Id} header) in fixed
 * one-minute windows, so one noisy tenant cannot starve the others.
 */
@RestController
public class TenantUsageController {

	private static final Map<String, String> PLANS = Map.of("acme", "enterprise", "globex", "starter");

	private final Map<String, AtomicLong> calls = new ConcurrentHashMap<>();

	/**
	 * The usage of the calling tenant.
	 * @param tenant the tenant id
	 * @return the usage, or 404 for an unknown tenant
	 */
	@RateLimited(algorithm = Algorithm.FIXED_WINDOW, capacity = 10, period = "1m", key = KeySource.TENANT)
	@GetMapping("/api/tenant/usage")
	public ResponseEntity<Usage> usage(@RequestHeader("X-Tenant-Id") String tenant) {
		String plan = PLANS.get(tenant);
		if (plan == null) {
			return ResponseEntity.notFound().build();
		}
		long served = this.calls.computeIfAbsent(tenant, (key) -> new AtomicLong()).incrementAndGet();
		return ResponseEntity.ok(new Usage(tenant, plan, served, Instant.now()));
	}

	/**
	 * A tenant's usage.
	 *
	 * @param tenant the tenant id
	 * @param plan the tenant's plan
	 * @param callsServed usage calls answered since startup
	 * @param at when the usage was read
	 */
	public record Usage(String tenant, String plan, long callsServed, Instant at) {

	}

}
