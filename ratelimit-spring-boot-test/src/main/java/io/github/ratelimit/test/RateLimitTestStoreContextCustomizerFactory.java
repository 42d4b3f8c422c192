package io.github.ratelimit.test;

import java.util.List;
import java.util.Map;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

import io.github.ratelimit.test.AutoConfigureRateLimitTest.Store;

/**
 * Puts {@code ratelimit.store=memory} into the environment of a test annotated with
 * {@link AutoConfigureRateLimitTest} whose {@link AutoConfigureRateLimitTest#store() store}
 * is {@link Store#MEMORY}: above the application's configuration files and environment
 * variables, below the test's own properties and Java system properties. Registered in
 * {@code META-INF/spring.factories}.
 */
final class RateLimitTestStoreContextCustomizerFactory implements ContextCustomizerFactory {

	@Override
	public ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		AutoConfigureRateLimitTest annotation = TestContextAnnotationUtils.findMergedAnnotation(testClass,
				AutoConfigureRateLimitTest.class);
		return (annotation != null && annotation.store() == Store.MEMORY) ? new MemoryStore() : null;
	}

	/** Equal to one another, so that tests of one configuration share their context. */
	private record MemoryStore() implements ContextCustomizer {

		static final String PROPERTY_SOURCE_NAME = "rateLimitTestStore";

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
			MutablePropertySources sources = context.getEnvironment().getPropertySources();
			MapPropertySource memory = new MapPropertySource(PROPERTY_SOURCE_NAME, Map.of("ratelimit.store", "memory"));
			if (sources.contains(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME)) {
				sources.addBefore(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME, memory);
			}
			else {
				sources.addFirst(memory);
			}
		}

	}

}
