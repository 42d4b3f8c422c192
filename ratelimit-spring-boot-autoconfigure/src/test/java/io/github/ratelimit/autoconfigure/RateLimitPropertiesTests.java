package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.autoconfigure.RateLimitProperties.StoreType;
import io.github.ratelimit.internal.pipeline.HeaderStyle;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitPropertiesTests {

	@Test
	void defaultsMatchTheDocumentedConfiguration() {
		RateLimitProperties properties = new RateLimitProperties();
		assertThat(properties.isEnabled()).isTrue();
		assertThat(properties.getStore()).isEqualTo(StoreType.AUTO);
		assertThat(properties.getDefaultKey()).containsExactly(KeySource.PRINCIPAL, KeySource.IP);
		assertThat(properties.getFailMode()).isEqualTo(FailMode.OPEN);
		assertThat(properties.getFallbackFactor()).isEqualTo(0.5);
		assertThat(properties.getHeaders()).isEqualTo(HeaderStyle.IETF);
		assertThat(properties.getFilterOrder()).isEqualTo(-110);
		assertThat(properties.getTenant().getHeader()).isEqualTo("X-Tenant-Id");
		assertThat(properties.getTenant().getPattern()).isEqualTo("[A-Za-z0-9._:-]{1,64}");
		assertThat(properties.getClientIp().getTrustedProxies()).isEmpty();
		assertThat(properties.getClientIp().getIpv6PrefixLength()).isEqualTo(64);
		assertThat(properties.getMemory().getMaximumKeys()).isEqualTo(100_000);
		assertThat(properties.getPolicies()).isEmpty();
		assertThat(properties.getRoutes()).isEmpty();
		assertThat(properties.getRedis().getKeyPrefix()).isEqualTo("ratelimit:");
		assertThat(properties.getRedis().getTimeout()).isEqualTo(Duration.ofMillis(250));
		assertThat(properties.getRedis().getMode()).isEqualTo(RateLimitProperties.Redis.Mode.EXACT);
		assertThat(properties.getRedis().getSyncInterval()).isEqualTo(Duration.ofMillis(10));
		assertThat(properties.getRedis().getExactLimits()).isEmpty();
		assertThat(properties.getRedis().isRateLimitsOnly()).isTrue();
	}

	@Test
	void bindsTheLocalFirstModeWithRelaxedNames() {
		RateLimitProperties.Redis redis = bind(Map.of("ratelimit.redis.mode", "local-first",
				"ratelimit.redis.sync-interval", "5ms", "ratelimit.redis.exact-limits", "login-username,export"))
			.getRedis();
		assertThat(redis.getMode()).isEqualTo(RateLimitProperties.Redis.Mode.LOCAL_FIRST);
		assertThat(redis.getSyncInterval()).isEqualTo(Duration.ofMillis(5));
		assertThat(redis.getExactLimits()).containsExactly("login-username", "export");
	}

	@Test
	void clientRetryDefaultsAreOffAndRetryIdempotentMethodsOn429And503() {
		RateLimitClientProperties.Retry retry = new RateLimitClientProperties().getRetry();
		assertThat(retry.isEnabled()).isFalse();
		assertThat(retry.getMaxAttempts()).isEqualTo(3);
		assertThat(retry.getMaxTotalTime()).isEqualTo(Duration.ofSeconds(30));
		assertThat(retry.getInitialDelay()).isEqualTo(Duration.ofMillis(100));
		assertThat(retry.getMaxDelay()).isEqualTo(Duration.ofSeconds(10));
		assertThat(retry.getMultiplier()).isEqualTo(2.0);
		assertThat(retry.getMethods()).containsExactly("GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE");
		assertThat(retry.getStatuses()).containsExactly(429, 503);
	}

	@Test
	void bindsClientRetryWithRelaxedNames() {
		RateLimitClientProperties.Retry retry = bindClient(Map.of("ratelimit.client.retry.enabled", "true",
				"ratelimit.client.retry.max-attempts", "5", "ratelimit.client.retry.max-total-time", "1m",
				"ratelimit.client.retry.initial-delay", "250ms", "ratelimit.client.retry.max-delay", "20s",
				"ratelimit.client.retry.multiplier", "1.5", "ratelimit.client.retry.methods", "get,post",
				"ratelimit.client.retry.statuses", "429"))
			.getRetry();
		assertThat(retry.isEnabled()).isTrue();
		assertThat(retry.getMaxAttempts()).isEqualTo(5);
		assertThat(retry.getMaxTotalTime()).isEqualTo(Duration.ofMinutes(1));
		assertThat(retry.getInitialDelay()).isEqualTo(Duration.ofMillis(250));
		assertThat(retry.getMaxDelay()).isEqualTo(Duration.ofSeconds(20));
		assertThat(retry.getMultiplier()).isEqualTo(1.5);
		assertThat(retry.getMethods()).containsExactly("get", "post");
		assertThat(retry.getStatuses()).containsExactly(429);
	}

	@Test
	void defaultsLeaveEveryPolicySettingUnsetSoTheAnnotationDecides() {
		RateLimitPolicyProperties policy = new RateLimitPolicyProperties();
		assertThat(policy.getAlgorithm()).isNull();
		assertThat(policy.getCapacity()).isNull();
		assertThat(policy.getRefillTokens()).isNull();
		assertThat(policy.getPeriod()).isNull();
		assertThat(policy.getCost()).isNull();
		assertThat(policy.getKey()).isEmpty();
		assertThat(policy.getMaxWait()).as("no policy makes a caller wait unless it says so").isNull();
		assertThat(policy.getCalendar()).isNull();
		assertThat(policy.getTimeZone()).isNull();
		assertThat(policy.getCountStatuses()).as("every request counts unless the policy says otherwise").isEmpty();
	}

	@Test
	void defaultsLeaveEveryRouteSettingUnsetSoThePolicyDecides() {
		RateLimitRouteProperties route = new RateLimitRouteProperties();
		assertThat(route.getPath()).isNull();
		assertThat(route.getMethods()).isEmpty();
		assertThat(route.getPolicy()).isNull();
		assertThat(route.getAlgorithm()).isNull();
		assertThat(route.getCapacity()).isNull();
		assertThat(route.getCost()).isNull();
		assertThat(route.getKey()).isEmpty();
		assertThat(route.getFailMode()).isNull();
		assertThat(route.getShadow()).isNull();
		assertThat(route.getMaxWait()).isNull();
		assertThat(route.getCountStatuses()).isEmpty();
		assertThat(route.getCandidate().getCapacity()).isNull();
		assertThat(route.getPlans()).isEmpty();
	}

	@Test
	void bindsEverySettingOfAPolicyAndOfARouteUnderItsOwnName() {
		Map<String, String> values = new HashMap<>();
		for (String prefix : new String[] { "ratelimit.policies.exports.", "ratelimit.routes[0]." }) {
			values.put(prefix + "algorithm", "fixed-window");
			values.put(prefix + "capacity", "10");
			values.put(prefix + "refill-tokens", "2");
			values.put(prefix + "period", "1m");
			values.put(prefix + "cost", "3");
			values.put(prefix + "key", "tenant");
			values.put(prefix + "fail-mode", "closed");
			values.put(prefix + "shadow", "true");
			values.put(prefix + "calendar", "week");
			values.put(prefix + "time-zone", "UTC");
			values.put(prefix + "count-statuses", "4xx");
			values.put(prefix + "max-wait", "1s");
			values.put(prefix + "candidate.algorithm", "sliding-window-log");
			values.put(prefix + "candidate.capacity", "20");
			values.put(prefix + "candidate.refill-tokens", "4");
			values.put(prefix + "candidate.period", "2m");
			values.put(prefix + "plans.pro.capacity", "100");
		}
		values.put("ratelimit.routes[0].path", "/exports/**");
		values.put("ratelimit.routes[0].methods", "GET");
		values.put("ratelimit.routes[0].policy", "exports");
		RateLimitProperties properties = bind(values);
		RateLimitPolicyProperties policy = properties.getPolicies().get("exports");
		RateLimitRouteProperties route = properties.getRoutes().get(0);
		assertThat(route.getPath()).isEqualTo("/exports/**");
		assertThat(route.getMethods()).containsExactly("GET");
		assertThat(route.getPolicy()).isEqualTo("exports");
		assertThat(List.of(policy.getAlgorithm(), route.getAlgorithm())).containsOnly(Algorithm.FIXED_WINDOW);
		assertThat(List.of(policy.getCapacity(), route.getCapacity())).containsOnly(10L);
		assertThat(List.of(policy.getRefillTokens(), route.getRefillTokens())).containsOnly(2L);
		assertThat(List.of(policy.getPeriod(), route.getPeriod())).containsOnly(Duration.ofMinutes(1));
		assertThat(List.of(policy.getCost(), route.getCost())).containsOnly(3L);
		assertThat(List.of(policy.getKey(), route.getKey())).containsOnly(List.of(KeySource.TENANT));
		assertThat(List.of(policy.getFailMode(), route.getFailMode())).containsOnly(FailMode.CLOSED);
		assertThat(List.of(policy.getShadow(), route.getShadow())).containsOnly(true);
		assertThat(List.of(policy.getCalendar(), route.getCalendar())).containsOnly(CalendarPeriod.WEEK);
		assertThat(List.of(policy.getTimeZone(), route.getTimeZone())).containsOnly(ZoneId.of("UTC"));
		assertThat(List.of(policy.getCountStatuses(), route.getCountStatuses())).containsOnly(List.of("4xx"));
		assertThat(List.of(policy.getMaxWait(), route.getMaxWait())).containsOnly(Duration.ofSeconds(1));
		for (RateLimitPolicyProperties.Parameters candidate : List.of(policy.getCandidate(), route.getCandidate())) {
			assertThat(candidate.getAlgorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_LOG);
			assertThat(candidate.getCapacity()).isEqualTo(20);
			assertThat(candidate.getRefillTokens()).isEqualTo(4);
			assertThat(candidate.getPeriod()).isEqualTo(Duration.ofMinutes(2));
		}
		assertThat(policy.getPlans().get("pro").getCapacity()).isEqualTo(100);
		assertThat(route.getPlans().get("pro").getCapacity()).isEqualTo(100);
	}

	@Test
	void bindsCountStatusesFromAListOrACommaSeparatedValue() {
		RateLimitProperties properties = bind(Map.of("ratelimit.policies.logins.count-statuses", "401,403",
				"ratelimit.routes[0].count-statuses[0]", "5xx"));
		assertThat(properties.getPolicies().get("logins").getCountStatuses()).containsExactly("401", "403");
		assertThat(properties.getRoutes().get(0).getCountStatuses()).containsExactly("5xx");
	}

	@Test
	void bindsCalendarAndTimeZone() {
		RateLimitProperties properties = bind(Map.of("ratelimit.policies.daily.calendar", "day",
				"ratelimit.policies.daily.time-zone", "Europe/Berlin", "ratelimit.routes[0].calendar", "MONTH",
				"ratelimit.routes[0].time-zone", "+02:00"));
		assertThat(properties.getPolicies().get("daily").getCalendar()).isEqualTo(CalendarPeriod.DAY);
		assertThat(properties.getPolicies().get("daily").getTimeZone()).isEqualTo(ZoneId.of("Europe/Berlin"));
		assertThat(properties.getRoutes().get(0).getCalendar()).isEqualTo(CalendarPeriod.MONTH);
		assertThat(properties.getRoutes().get(0).getTimeZone()).isEqualTo(ZoneOffset.ofHours(2));
	}

	@Test
	void bindsMaxWaitAsADuration() {
		RateLimitProperties properties = bind(Map.of("ratelimit.policies.sms.max-wait", "2s",
				"ratelimit.policies.batch.max-wait", "PT0.5S"));
		assertThat(properties.getPolicies().get("sms").getMaxWait()).isEqualTo(Duration.ofSeconds(2));
		assertThat(properties.getPolicies().get("batch").getMaxWait()).isEqualTo(Duration.ofMillis(500));
	}

	@Test
	void bindsHeaderStylesInTheirDocumentedSpelling() {
		assertThat(bind(Map.of("ratelimit.headers", "draft-06")).getHeaders()).isEqualTo(HeaderStyle.DRAFT_06);
		assertThat(bind(Map.of("ratelimit.headers", "x-ratelimit")).getHeaders()).isEqualTo(HeaderStyle.X_RATELIMIT);
		assertThat(bind(Map.of("ratelimit.headers", "none")).getHeaders()).isEqualTo(HeaderStyle.NONE);
		assertThat(bind(Map.of("ratelimit.headers", "ietf")).getHeaders()).isEqualTo(HeaderStyle.IETF);
	}

	@Test
	void bindsPolicyWithRelaxedNames() {
		RateLimitProperties properties = bind(Map.of("ratelimit.policies.search.algorithm", "sliding-window-counter",
				"ratelimit.policies.search.capacity", "1000", "ratelimit.policies.search.period", "1m",
				"ratelimit.policies.search.key[0]", "principal", "ratelimit.policies.search.key[1]", "ip",
				"ratelimit.policies.search.refill-tokens", "10"));
		RateLimitPolicyProperties search = properties.getPolicies().get("search");
		assertThat(search.getAlgorithm()).isEqualTo(Algorithm.SLIDING_WINDOW_COUNTER);
		assertThat(search.getCapacity()).isEqualTo(1000);
		assertThat(search.getPeriod()).isEqualTo(Duration.ofMinutes(1));
		assertThat(search.getKey()).containsExactly(KeySource.PRINCIPAL, KeySource.IP);
		assertThat(search.getRefillTokens()).isEqualTo(10);
		assertThat(search.getCost()).isNull();
	}

	@Test
	void bindsCommaSeparatedKeyLists() {
		RateLimitProperties properties = bind(Map.of("ratelimit.policies.search.key", "principal, ip",
				"ratelimit.default-key", "tenant,global"));
		assertThat(properties.getPolicies().get("search").getKey()).containsExactly(KeySource.PRINCIPAL, KeySource.IP);
		assertThat(properties.getDefaultKey()).containsExactly(KeySource.TENANT, KeySource.GLOBAL);
	}

	@Test
	void bindsRoutesAndNestedGroups() {
		RateLimitProperties properties = bind(Map.of("ratelimit.routes[0].path", "/api/reports/**",
				"ratelimit.routes[0].methods", "post", "ratelimit.routes[0].policy", "search",
				"ratelimit.routes[0].cost", "50", "ratelimit.fail-mode", "closed", "ratelimit.store", "memory",
				"ratelimit.client-ip.trusted-proxies", "10.0.0.0/8,192.168.0.0/16",
				"ratelimit.client-ip.ipv6-prefix-length", "56", "ratelimit.memory.maximum-keys", "5000",
				"ratelimit.tenant.header", "X-Org"));
		RateLimitRouteProperties route = properties.getRoutes().get(0);
		assertThat(route.getPath()).isEqualTo("/api/reports/**");
		assertThat(route.getMethods()).containsExactly("post");
		assertThat(route.getPolicy()).isEqualTo("search");
		assertThat(route.getCost()).isEqualTo(50);
		assertThat(properties.getFailMode()).isEqualTo(FailMode.CLOSED);
		assertThat(properties.getStore()).isEqualTo(StoreType.MEMORY);
		assertThat(properties.getClientIp().getTrustedProxies()).containsExactly("10.0.0.0/8", "192.168.0.0/16");
		assertThat(properties.getClientIp().getIpv6PrefixLength()).isEqualTo(56);
		assertThat(properties.getMemory().getMaximumKeys()).isEqualTo(5000);
		assertThat(properties.getTenant().getHeader()).isEqualTo("X-Org");
	}

	private static RateLimitProperties bind(Map<String, String> values) {
		Binder binder = new Binder(new MapConfigurationPropertySource(values));
		return binder.bindOrCreate("ratelimit", RateLimitProperties.class);
	}

	private static RateLimitClientProperties bindClient(Map<String, String> values) {
		Binder binder = new Binder(new MapConfigurationPropertySource(values));
		return binder.bindOrCreate("ratelimit.client", RateLimitClientProperties.class);
	}

}
