package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.metrics.RateLimitMetrics;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitMetricsAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	@Test
	void registersMetersWhenTheApplicationHasAMeterRegistry() {
		this.contextRunner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			assertThat(context).hasSingleBean(RateLimitMetrics.class);
			context.getBean(RateLimiter.class).acquire(List.of(acquisition()));
			assertThat(context.getBean(MeterRegistry.class)
				.get("ratelimit.requests")
				.tag("result", "allowed")
				.tag("store", "memory")
				.counter()
				.count()).isEqualTo(1);
		});
	}

	@Test
	void backsOffWithoutAMeterRegistry() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(RateLimitMetrics.class));
	}

	@Test
	void backsOffWithoutMicrometer() {
		this.contextRunner.withClassLoader(new FilteredClassLoader("io.micrometer"))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitMetrics.class));
	}

	@Test
	void metersRenderInPrometheusUnderTheNamesTheAlertRulesUse() {
		this.contextRunner.withBean(MeterRegistry.class, () -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))
			.run((context) -> {
				RateLimiter limiter = context.getBean(RateLimiter.class);
				limiter.acquire(List.of(acquisition()));
				limiter.acquire(List.of(acquisition()));
				String scrape = ((PrometheusMeterRegistry) context.getBean(MeterRegistry.class)).scrape();
				assertThat(scrape)
					.contains("ratelimit_requests_total{limit=\"GET /orders/{id}\",result=\"allowed\",store=\"memory\"} 1.0")
					.contains("ratelimit_requests_total{limit=\"GET /orders/{id}\",result=\"rejected\",store=\"memory\"} 1.0")
					.containsPattern("ratelimit_store_latency_seconds_count\\{store=\"memory\"} [012]\\b")
					.contains("ratelimit_fallback_active 0.0")
					.contains("ratelimit_buckets{store=\"memory\"} 1.0")
					.contains("ratelimit_buckets_max{store=\"memory\"} 100000.0");
			});
	}

	@Test
	void chargesNotTakenAndGivenBackRenderInPrometheus() {
		this.contextRunner.withBean(MeterRegistry.class, () -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))
			.run((context) -> {
				RateLimiter limiter = context.getBean(RateLimiter.class);
				Acquisition search = new Acquisition(
						RateLimit.of("search", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1)), "user:alice", 1);
				limiter.acquire(List.of(acquisition()));
				// the orders limit is used up: it rejects, and the search limit, which had
				// room, is not charged
				assertThat(limiter.acquire(List.of(search, acquisition())).allowed()).isFalse();
				RateLimitResult admitted = limiter.acquire(List.of(search));
				limiter.refund(List.of(search), admitted);
				String scrape = ((PrometheusMeterRegistry) context.getBean(MeterRegistry.class)).scrape();
				assertThat(scrape)
					.contains("ratelimit_requests_total{limit=\"search\",result=\"not_charged\",store=\"memory\"} 1.0")
					.contains("ratelimit_requests_total{limit=\"search\",result=\"allowed\",store=\"memory\"} 1.0")
					.contains("ratelimit_refunds_total{limit=\"search\",store=\"memory\"} 1.0");
			});
	}

	@Test
	void everyObserverBeanHearsOfRefunds() {
		List<Acquisition> heard = new ArrayList<>();
		this.contextRunner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withBean("listeningObserver", RateLimitObserver.class, () -> new RateLimitObserver() {
				@Override
				public void refunded(List<Acquisition> acquisitions, RateLimitResult decided) {
					heard.addAll(acquisitions);
				}
			})
			.run((context) -> {
				RateLimiter limiter = context.getBean(RateLimiter.class);
				RateLimitResult admitted = limiter.acquire(List.of(acquisition()));
				limiter.refund(List.of(acquisition()), admitted);
				assertThat(heard).containsExactly(acquisition());
				assertThat(context.getBean(MeterRegistry.class).get("ratelimit.refunds").counter().count())
					.isEqualTo(1);
			});
	}

	private static Acquisition acquisition() {
		return new Acquisition(RateLimit.of("GET /orders/{id}", Algorithm.TOKEN_BUCKET, 1, Duration.ofHours(1)),
				"user:alice", 1);
	}

}
