package io.github.ratelimit.autoconfigure;

import java.io.File;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.github.ratelimit.RateLimitExceededException;
import io.github.ratelimit.RateLimited;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the auto-configuration on a class path without spring-web, the servlet API or
 * Spring Security, as in a batch application that depends on the starter alone. A
 * {@code FilteredClassLoader} cannot prove this: it hides classes from Spring's checks,
 * but the JVM still links the library against the full test class path.
 */
class RateLimitAutoConfigurationWithoutSpringWebTests {

	private static final List<String> WEB_ARTIFACTS = List.of("spring-web-", "spring-webmvc-", "jakarta.servlet-api-",
			"tomcat-embed-", "spring-security-", "spring-boot-webmvc-", "spring-boot-servlet-",
			"spring-boot-web-server-", "spring-boot-tomcat-", "spring-boot-security-", "spring-boot-http-converter-");

	@Test
	void limitsBeanMethodsWithoutSpringWebOnTheClassPath() throws Exception {
		try (URLClassLoader classLoader = new URLClassLoader(classPathWithoutWeb(),
				ClassLoader.getPlatformClassLoader())) {
			assertThat(ClassUtils.isPresent("org.springframework.web.util.pattern.PathPattern", classLoader)).isFalse();
			assertThat(ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest", classLoader)).isFalse();
			assertThat(ClassUtils.isPresent(RateLimitAutoConfiguration.class.getName(), classLoader)).isTrue();
			Callable<?> application = (Callable<?>) ReflectionUtils
				.accessibleConstructor(classLoader.loadClass(NonWebApplication.class.getName()))
				.newInstance();
			Thread thread = Thread.currentThread();
			ClassLoader previous = thread.getContextClassLoader();
			thread.setContextClassLoader(classLoader);
			try {
				assertThat(application.call()).isEqualTo(List.of("allowed", "allowed", "rejected"));
			}
			finally {
				thread.setContextClassLoader(previous);
			}
		}
	}

	private static URL[] classPathWithoutWeb() throws MalformedURLException {
		String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
		List<URL> urls = new ArrayList<>();
		for (String entry : classPath.split(File.pathSeparator)) {
			File file = new File(entry);
			if (!entry.isEmpty() && WEB_ARTIFACTS.stream().noneMatch(file.getName()::startsWith)) {
				urls.add(file.toURI().toURL());
			}
		}
		return urls.toArray(URL[]::new);
	}

	/** Loaded by the class loader without spring-web. */
	static class NonWebApplication implements Callable<List<String>> {

		@Override
		public List<String> call() {
			List<String> outcomes = new ArrayList<>();
			new ApplicationContextRunner()
				.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RateLimitAutoConfiguration.class))
				.withBean(LimitedService.class)
				.withPropertyValues("ratelimit.client-ip.trusted-proxies=10.0.0.0/8", "ratelimit.tenant.pattern=[a-z]+")
				.run((context) -> {
					if (context.getStartupFailure() != null) {
						throw new IllegalStateException("Context failed to start", context.getStartupFailure());
					}
					LimitedService service = context.getBean(LimitedService.class);
					for (int i = 0; i < 3; i++) {
						try {
							service.call();
							outcomes.add("allowed");
						}
						catch (RateLimitExceededException ex) {
							outcomes.add("rejected");
						}
					}
				});
			return outcomes;
		}

	}

	static class LimitedService {

		@RateLimited(capacity = 2, period = "1h")
		public void call() {
		}

	}

}
