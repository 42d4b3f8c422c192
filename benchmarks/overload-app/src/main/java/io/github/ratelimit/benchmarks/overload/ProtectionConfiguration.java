package io.github.ratelimit.benchmarks.overload;

import java.util.Set;

import jakarta.servlet.Filter;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.resilience.annotation.EnableResilientMethods;
import org.springframework.web.server.WebFilter;

/**
 * The dependency, and the protection {@code bench.protection} names. The fixed and Netflix
 * filters guard {@code /work} alone and run first, as this library's filter does; the
 * {@code ours} variant adds nothing here, it is the starter configured by
 * {@code ratelimit.overload.*}.
 */
@Configuration(proxyBeanMethods = false)
class ProtectionConfiguration {

	private static final Set<String> VARIANTS = Set.of("none", "fixed", "spring", "netflix", "ours");

	/** Runs the protection filters before anything else, the library's filter included. */
	private static final int FILTER_ORDER = Ordered.HIGHEST_PRECEDENCE;

	@Bean
	SaturatedDependency saturatedDependency(BenchSettings settings, Environment environment) {
		check(settings, environment);
		return new SaturatedDependency(settings.base(), settings.knee(), System::nanoTime);
	}

	/**
	 * Fails the startup when the variant is unknown, or when the library's overload
	 * protection is on for another variant or off for {@code ours}, so that a run never
	 * measures something other than its label says.
	 */
	private static void check(BenchSettings settings, Environment environment) {
		String protection = settings.protection();
		if (!VARIANTS.contains(protection)) {
			throw new IllegalStateException(
					"bench.protection must be one of none, fixed, spring, netflix, ours: " + protection);
		}
		boolean overload = environment.getProperty("ratelimit.overload.enabled", Boolean.class, false);
		if (protection.equals("ours") != overload) {
			throw new IllegalStateException("bench.protection=" + protection + " needs ratelimit.overload.enabled="
					+ protection.equals("ours") + ", not " + overload);
		}
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "bench.protection", havingValue = "fixed")
	static class FixedConfiguration {

		@Bean
		FixedLimit fixedLimit(BenchSettings settings) {
			return new FixedLimit(settings.effectiveFixedLimit());
		}

		@Bean
		@ConditionalOnWebApplication(type = Type.SERVLET)
		FilterRegistrationBean<Filter> fixedLimitFilter(FixedLimit limit) {
			FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(limit.servletFilter());
			registration.addUrlPatterns("/work");
			registration.setOrder(FILTER_ORDER);
			return registration;
		}

		@Bean
		@ConditionalOnWebApplication(type = Type.REACTIVE)
		WebFilter fixedLimitWebFilter(FixedLimit limit) {
			return limit.webFilter();
		}

	}

	/**
	 * Spring Framework 7's {@code @ConcurrencyLimit} on the handler, with the policy that
	 * rejects (the default blocks); servlet stack only, where the handler's call lasts as
	 * long as the request.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "bench.protection", havingValue = "spring")
	@EnableResilientMethods
	static class SpringConfiguration {

		SpringConfiguration(Environment environment) {
			if (!"servlet".equals(environment.getProperty("spring.main.web-application-type", "servlet"))) {
				throw new IllegalStateException("bench.protection=spring runs on the servlet stack only:"
						+ " @ConcurrencyLimit would limit the call that returns a Mono, not the request");
			}
		}

	}

	/** Netflix's limiter has no WebFlux adapter: the variant runs on the servlet stack only. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "bench.protection", havingValue = "netflix")
	static class NetflixConfiguration {

		@Bean
		NetflixLimit netflixLimit(BenchSettings settings, Environment environment) {
			if (!"servlet".equals(environment.getProperty("spring.main.web-application-type", "servlet"))) {
				throw new IllegalStateException("bench.protection=netflix runs on the servlet stack only:"
						+ " Netflix's concurrency-limits has no WebFlux adapter");
			}
			return new NetflixLimit(settings.netflix());
		}

		@Bean
		FilterRegistrationBean<Filter> netflixLimitFilter(NetflixLimit limit) {
			FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(limit.servletFilter());
			registration.addUrlPatterns("/work");
			registration.setOrder(FILTER_ORDER);
			return registration;
		}

	}

}
