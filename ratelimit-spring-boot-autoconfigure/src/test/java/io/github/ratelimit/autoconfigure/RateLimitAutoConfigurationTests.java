package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.KeySource;
import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimited;
import io.github.ratelimit.internal.aop.RateLimitedAdvisor;
import io.github.ratelimit.internal.aop.RateLimitedMethodInterceptor;
import io.github.ratelimit.internal.core.FailoverRateLimitStore;
import io.github.ratelimit.internal.core.Identities;
import io.github.ratelimit.internal.core.LimitResolver;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.memory.InMemoryRateLimitStore;
import io.github.ratelimit.internal.pipeline.ClientIpResolver;
import io.github.ratelimit.internal.pipeline.HeaderStyle;
import io.github.ratelimit.internal.pipeline.IpRange;
import io.github.ratelimit.internal.pipeline.RateLimitResponses;
import io.github.ratelimit.internal.pipeline.RequestIdentityResolver;
import io.github.ratelimit.internal.pipeline.RequestLimits;
import io.github.ratelimit.internal.pipeline.RequestRateLimiter;
import io.github.ratelimit.internal.pipeline.Verdict;
import io.github.ratelimit.internal.web.RateLimitFilter;
import io.github.ratelimit.internal.web.ServletRateLimitRequest;
import io.github.ratelimit.internal.webflux.RateLimitHandlerWebFilter;
import io.github.ratelimit.internal.webflux.RateLimitWebFilter;
import io.github.ratelimit.internal.webflux.ReactiveHandlerLimits;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RateLimitAutoConfigurationTests {

	/** A fixed instant, so that no bucket refills between calls. */
	private static final long NOW_MICROS = 1_700_000_000_000_000L;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	private final WebApplicationContextRunner webContextRunner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

	@Test
	void reactiveWebApplicationGetsTheReactiveFrontEndAndNoServletOne() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.routes[0].path=/api/**", "ratelimit.routes[0].capacity=5")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).hasSingleBean(RequestRateLimiter.class);
				assertThat(context).hasSingleBean(RateLimitWebFilter.class);
				assertThat(context).hasSingleBean(RateLimitHandlerWebFilter.class);
				assertThat(context).hasSingleBean(ReactiveHandlerLimits.class);
				assertThat(context).doesNotHaveBean(RateLimitFilter.class);
				assertThat(context).doesNotHaveBean(RateLimitServletConfiguration.FILTER_NAME);
				assertThat(context.getBean(RateLimitWebFilter.class).getOrder()).isEqualTo(RateLimitWebFilter.DEFAULT_ORDER);
			});
	}

	@Test
	void backsOffWhenDisabled() {
		this.webContextRunner.withPropertyValues("ratelimit.enabled=false").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(RateLimiter.class);
			assertThat(context).doesNotHaveBean(RateLimitStore.class);
			assertThat(context).doesNotHaveBean(RateLimitedAdvisor.class);
			assertThat(context).doesNotHaveBean(RateLimitedMethodInterceptor.class);
			assertThat(context).doesNotHaveBean(RateLimitProperties.class);
			assertThat(context).doesNotHaveBean(RequestRateLimiter.class);
			assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
			assertThat(context).doesNotHaveBean(RateLimitServletConfiguration.FILTER_NAME);
		});
	}

	@Test
	void backsOffWhenDisabledEvenIfTheRestOfTheConfigurationIsInvalid() {
		this.webContextRunner
			.withPropertyValues("ratelimit.enabled=false", "ratelimit.policies.x.capacity=0",
					"ratelimit.store=redis")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimiter.class));
	}

	@Test
	void configuresInMemoryStoreByDefault() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(RateLimitStore.class);
			assertThat(context.getBean(RateLimitStore.class)).isInstanceOf(InMemoryRateLimitStore.class);
			assertThat(context.getBean(RateLimiter.class).getStore()).isSameAs(context.getBean(RateLimitStore.class));
		});
	}

	@Test
	void inMemoryStoreKeepsNoMoreThanTheMaximumKeysWhenEveryRequestNamesANewTenant() {
		this.webContextRunner.withPropertyValues("ratelimit.memory.maximum-keys=500").run((context) -> {
			InMemoryRateLimitStore store = context.getBean(InMemoryRateLimitStore.class);
			floodWithNewTenants(context.getBean(RequestIdentityResolver.class), store, 20_000);
			assertThat(store.size()).isBetween(1L, 500L);
		});
	}

	@Test
	void fallbackStoreKeepsNoMoreThanTheMaximumKeysWhenEveryRequestNamesANewTenant() {
		// nothing listens on port 1 of loopback: every call to Redis fails, the fallback decides
		this.webContextRunner
			.withBean(RedisConnectionFactory.class,
					() -> new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 1)))
			.withPropertyValues("ratelimit.memory.maximum-keys=500", "ratelimit.redis.timeout=100ms")
			.run((context) -> {
				FailoverRateLimitStore store = context.getBean(FailoverRateLimitStore.class);
				floodWithNewTenants(context.getBean(RequestIdentityResolver.class), store, 20_000);
				assertThat(store.status().fallbackActive()).isTrue();
				assertThat(store).extracting("fallback")
					.asInstanceOf(InstanceOfAssertFactories.type(InMemoryRateLimitStore.class))
					.satisfies((fallback) -> assertThat(fallback.size()).isBetween(1L, 500L));
			});
	}

	/** Every request carries a tenant id never seen before, as an attacker rotating the header would send. */
	private static void floodWithNewTenants(RequestIdentityResolver identities, RateLimitStore store, int requests) {
		RateLimit limit = RateLimit.of("reports", Algorithm.TOKEN_BUCKET, 10, Duration.ofHours(1));
		for (int i = 0; i < requests; i++) {
			MockHttpServletRequest request = new MockHttpServletRequest();
			request.setRemoteAddr("203.0.113.9");
			request.addHeader("X-Tenant-Id", "tenant-" + i);
			String identity = identities.resolve("reports", List.of(KeySource.TENANT, KeySource.IP), new ServletRateLimitRequest(request));
			assertThat(identity).isEqualTo(Identities.tenant("tenant-" + i));
			assertThat(store.tryAcquire(List.of(new Acquisition(limit, identity, 1))).allowed()).isTrue();
		}
	}

	@Test
	void userStoreReplacesInMemoryStore() {
		this.contextRunner.withUserConfiguration(UserStoreConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(RateLimitStore.class);
			assertThat(context).doesNotHaveBean(InMemoryRateLimitStore.class);
			assertThat(context.getBean(RateLimiter.class).getStore())
				.isSameAs(context.getBean(UserStoreConfiguration.class).store);
		});
	}

	@Test
	void userClockDecidesTheInMemoryStore() {
		this.contextRunner.withUserConfiguration(FixedClockConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(RateLimitClock.class);
			RateLimit limit = RateLimit.of("clocked", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1));
			RateLimiter limiter = context.getBean(RateLimiter.class);
			RateLimitResult first = limiter.acquire(List.of(new Acquisition(limit, Identities.GLOBAL, 1)));
			RateLimitResult second = limiter.acquire(List.of(new Acquisition(limit, Identities.GLOBAL, 1)));
			assertThat(first.timestampMicros()).isEqualTo(NOW_MICROS);
			assertThat(first.allowed()).isTrue();
			assertThat(second.allowed()).isFalse();
			// time stands still, so the whole refill interval is still ahead
			assertThat(second.decisions().get(0).retryAfterMicros()).isEqualTo(1_000_000);
		});
	}

	@Test
	void userClientIpResolverResolvesRequestIdentities() {
		this.webContextRunner.withUserConfiguration(UserClientIpResolverConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(ClientIpResolver.class);
			assertThat(context.getBean(ClientIpResolver.class))
				.isSameAs(context.getBean(UserClientIpResolverConfiguration.class).resolver);
			MockHttpServletRequest request = new MockHttpServletRequest();
			request.setRemoteAddr("10.1.2.3");
			request.addHeader("X-Forwarded-For", "203.0.113.7");
			String identity = context.getBean(RequestIdentityResolver.class)
				.resolve("any", List.of(KeySource.IP), new ServletRateLimitRequest(request));
			// the default resolver trusts no proxy and would answer 10.1.2.3
			assertThat(identity).isEqualTo(Identities.ip("203.0.113.7"));
		});
	}

	@Test
	void userResponseWriterWritesTheHeaders() {
		this.webContextRunner.withUserConfiguration(UserResponseWriterConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(RateLimitResponses.class);
			RateLimit limit = RateLimit.of("written", Algorithm.TOKEN_BUCKET, 5, Duration.ofSeconds(1));
			MockHttpServletResponse response = new MockHttpServletResponse();
			RequestRateLimiter limiter = context.getBean(RequestRateLimiter.class);
			RequestLimits state = new RequestLimits();
			Verdict verdict = limiter.decide(List.of(new Acquisition(limit, Identities.GLOBAL, 1)), state);
			assertThat(verdict.proceeds()).isTrue();
			limiter.headers(state, response::setHeader);
			assertThat(response.getHeader("X-RateLimit-Limit")).isEqualTo("5");
			assertThat(response.getHeader("X-RateLimit-Remaining")).isEqualTo("4");
			assertThat(response.getHeader("RateLimit-Policy")).isNull();
		});
	}

	@Test
	void userLimitResolverReplacesTheDefault() {
		LimitResolver resolver = new LimitResolver(Map.of(), List.of(KeySource.GLOBAL));
		this.contextRunner.withBean(LimitResolver.class, () -> resolver)
			.run((context) -> assertThat(context.getBean(LimitResolver.class)).isSameAs(resolver));
	}

	@Test
	void registersFilterInServletWebApplication() {
		this.webContextRunner.run((context) -> {
			assertThat(context).hasSingleBean(RequestRateLimiter.class);
			assertThat(context).hasBean(RateLimitServletConfiguration.FILTER_NAME);
			FilterRegistrationBean<?> registration = context.getBean(RateLimitServletConfiguration.FILTER_NAME,
					FilterRegistrationBean.class);
			assertThat(registration.getFilterName()).isEqualTo("rateLimitFilter");
			assertThat(registration.getOrder()).isEqualTo(RateLimitFilter.DEFAULT_ORDER);
			assertThat(registration.getFilter()).isInstanceOf(RateLimitFilter.class);
		});
	}

	@Test
	void appliesConfiguredFilterOrder() {
		this.webContextRunner.withPropertyValues("ratelimit.filter-order=42")
			.run((context) -> assertThat(
					context.getBean(RateLimitServletConfiguration.FILTER_NAME, FilterRegistrationBean.class).getOrder())
				.isEqualTo(42));
	}

	@Test
	void configuresOnlyCoreBeansOutsideWebApplications() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(RateLimitProperties.class);
			assertThat(context).hasSingleBean(LimitResolver.class);
			assertThat(context).hasSingleBean(RateLimitClock.class);
			assertThat(context).hasSingleBean(RateLimitStore.class);
			assertThat(context).hasSingleBean(RateLimiter.class);
			assertThat(context).hasSingleBean(RateLimitedAdvisor.class);
			assertThat(context).hasSingleBean(RateLimitedMethodInterceptor.class);
			assertThat(context).doesNotHaveBean(RateLimitServletConfiguration.FILTER_NAME);
			assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
			assertThat(context).doesNotHaveBean(RequestRateLimiter.class);
			assertThat(context).doesNotHaveBean(RequestIdentityResolver.class);
		});
	}

	@Test
	void routeLimitsFailTheStartupOfAnApplicationThatIsNotAWebApplication() {
		this.contextRunner
			.withPropertyValues("ratelimit.routes[0].path=/api/**", "ratelimit.routes[0].capacity=5")
			.run((context) -> assertThat(context).getFailure()
				.isInstanceOf(RateLimitConfigurationException.class)
				.hasMessageContaining("ratelimit.routes")
				.hasMessageContaining("neither a servlet nor a reactive web application"));
	}

	@Test
	void aRouteStageIsDecidedAloneOnlyInAnApplicationWhereNoMethodIsLimited() {
		String[] route = { "ratelimit.routes[0].path=/api/**", "ratelimit.routes[0].capacity=5",
				"ratelimit.routes[0].key=ip" };
		ServletRateLimitRequest request = new ServletRateLimitRequest(new MockHttpServletRequest("GET", "/api/items"));
		this.webContextRunner.withPropertyValues(route).run((context) -> {
			RequestRateLimiter limiter = context.getBean(RequestRateLimiter.class);
			assertThat(limiter.decidesAlone(limiter.matchRoutes(request))).isTrue();
		});
		this.webContextRunner.withPropertyValues(route)
			.withUserConfiguration(SearchServiceConfiguration.class)
			.run((context) -> {
				RequestRateLimiter limiter = context.getBean(RequestRateLimiter.class);
				assertThat(limiter.decidesAlone(limiter.matchRoutes(request))).as("a limited call may join the request")
					.isFalse();
			});
	}

	@Test
	void annotatedBeansAreStillLimitedInAnApplicationThatIsNotAWebApplication() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).hasSingleBean(RateLimitedAdvisor.class);
			assertThat(context).doesNotHaveBean(RequestRateLimiter.class);
		});
	}

	@Test
	void startsWithoutSpringWebMvc() {
		this.webContextRunner.withClassLoader(new FilteredClassLoader("org.springframework.web.servlet"))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).hasSingleBean(RateLimiter.class);
				assertThat(context).hasSingleBean(RateLimitedAdvisor.class);
				assertThat(context).doesNotHaveBean(RateLimitServletConfiguration.FILTER_NAME);
				assertThat(context).doesNotHaveBean(RequestRateLimiter.class);
			});
	}

	@Test
	void nonWebApplicationStartsWithoutSpringWebMvc() {
		this.contextRunner.withClassLoader(new FilteredClassLoader("org.springframework.web.servlet"))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).hasSingleBean(RateLimiter.class);
				assertThat(context).doesNotHaveBean(RequestRateLimiter.class);
			});
	}

	@Test
	void policyPropertiesOverrideTheAnnotation() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
			.withUserConfiguration(FixedClockConfiguration.class, SearchServiceConfiguration.class)
			.withPropertyValues("ratelimit.policies.search.capacity=7")
			.run((context) -> {
				SearchService service = context.getBean(SearchService.class);
				assertThat(AopUtils.isAopProxy(service)).isTrue();
				for (int i = 0; i < 7; i++) {
					assertThat(service.search("q" + i)).isEqualTo("found q" + i);
				}
				assertThat(service.calls()).isEqualTo(7);
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.search("q8"))
					.satisfies((rejection) -> {
						assertThat(rejection.getRetryAfter()).isPositive();
						assertThat(rejection.getViolatedLimits()).containsExactly("search");
						assertThat(rejection.getDecisions()).singleElement()
							.satisfies((decision) -> assertThat(decision.limit().capacity()).isEqualTo(7));
					});
				assertThat(service.calls()).as("the rejected call does not reach the bean").isEqualTo(7);
			});
	}

	@Test
	void annotationCapacityAppliesWithoutPolicy() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
			.withUserConfiguration(FixedClockConfiguration.class, SearchServiceConfiguration.class)
			.run((context) -> {
				SearchService service = context.getBean(SearchService.class);
				for (int i = 0; i < 100; i++) {
					service.search("q");
				}
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> service.search("q"));
			});
	}

	@Test
	void retunesUnnamedLimitThroughTheAdvisedPolicyProperty() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class))
			.withUserConfiguration(FixedClockConfiguration.class)
			.withBean(UnnamedService.class)
			.withPropertyValues("ratelimit.policies[UnnamedService.call].capacity=3")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				UnnamedService service = context.getBean(UnnamedService.class);
				service.call();
				service.call();
				service.call();
				assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(service::call)
					.satisfies((rejection) -> assertThat(rejection.getViolatedLimits())
						.containsExactly("UnnamedService.call"));
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class FixedClockConfiguration {

		@Bean
		RateLimitClock fixedClock() {
			return () -> NOW_MICROS;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserStoreConfiguration {

		final RateLimitStore store = new RateLimitStore() {

			@Override
			public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
				throw new UnsupportedOperationException();
			}

			@Override
			public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
			}

		};

		@Bean
		RateLimitStore userStore() {
			return this.store;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserClientIpResolverConfiguration {

		final ClientIpResolver resolver = new ClientIpResolver(List.of(IpRange.parse("10.0.0.0/8")), 64);

		@Bean
		ClientIpResolver userClientIpResolver() {
			return this.resolver;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserResponseWriterConfiguration {

		@Bean
		RateLimitResponses userResponseWriter() {
			return new RateLimitResponses(HeaderStyle.X_RATELIMIT);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class SearchServiceConfiguration {

		@Bean
		SearchService searchService() {
			return new SearchService();
		}

	}

	static class UnnamedService {

		@RateLimited
		public void call() {
		}

	}

	static class SearchService {

		private int calls;

		int calls() {
			return this.calls;
		}

		@RateLimited(name = "search", capacity = 100, period = "1m")
		public String search(String query) {
			this.calls++;
			return "found " + query;
		}

	}

}
