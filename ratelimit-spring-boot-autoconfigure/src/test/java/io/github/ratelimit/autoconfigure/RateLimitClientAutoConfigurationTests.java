package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.boot.restclient.RestTemplateCustomizer;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.client.RestClient;

import io.github.ratelimit.RateLimitConfigurationException;
import io.github.ratelimit.internal.client.RateLimitRetryInterceptor;
import io.github.ratelimit.internal.client.RetrySettings;
import io.github.ratelimit.internal.client.ScriptedHttpServer;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitClientAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RestClientAutoConfiguration.class, RestTemplateAutoConfiguration.class,
				RateLimitClientAutoConfiguration.class));

	@Test
	void isOffByDefault() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitRetryInterceptor.class);
			assertThat(restClientInterceptors(context)).isEmpty();
			assertThat(context.getBean(RestTemplateBuilder.class).build().getInterceptors()).isEmpty();
		});
	}

	@Test
	void addsTheInterceptorToRestClientAndRestTemplateBuilders() {
		this.contextRunner
			.withPropertyValues("ratelimit.client.retry.enabled=true", "ratelimit.client.retry.max-attempts=5",
					"ratelimit.client.retry.methods=get,post", "ratelimit.client.retry.statuses=429")
			.run((context) -> {
				RateLimitRetryInterceptor interceptor = context.getBean(RateLimitRetryInterceptor.class);
				assertThat(restClientInterceptors(context)).containsExactly(interceptor);
				assertThat(context.getBean(RestTemplateBuilder.class).build().getInterceptors())
					.containsExactly(interceptor);
				RetrySettings settings = interceptor.getSettings();
				assertThat(settings.maxAttempts()).isEqualTo(5);
				assertThat(settings.methods()).containsExactlyInAnyOrder(HttpMethod.GET, HttpMethod.POST);
				assertThat(settings.statuses()).containsExactly(429);
			});
	}

	@Test
	void autoConfiguredClientsRetryARealServer() throws Exception {
		try (ScriptedHttpServer server = new ScriptedHttpServer()) {
			server.respond(429, "", "Retry-After", "0")
				.respond(200, "from RestClient")
				.respond(503, "", "RateLimit", "\"api\";r=0;t=0")
				.respond(200, "from RestTemplate");
			this.contextRunner.withPropertyValues("ratelimit.client.retry.enabled=true").run((context) -> {
				RestClient restClient = context.getBean(RestClient.Builder.class).build();
				assertThat(restClient.get().uri(server.uri("/a")).retrieve().body(String.class))
					.isEqualTo("from RestClient");
				assertThat(context.getBean(RestTemplateBuilder.class)
					.build()
					.getForObject(server.uri("/b"), String.class)).isEqualTo("from RestTemplate");
				assertThat(server.requests()).extracting(ScriptedHttpServer.Request::path)
					.containsExactly("/a", "/a", "/b", "/b");
			});
		}
	}

	@Test
	void keepsAnInterceptorTheApplicationDefines() {
		RateLimitRetryInterceptor own = new RateLimitRetryInterceptor(RetrySettings.defaults().withMaxAttempts(9));
		this.contextRunner.withPropertyValues("ratelimit.client.retry.enabled=true")
			.withBean(RateLimitRetryInterceptor.class, () -> own)
			.run((context) -> {
				assertThat(context).getBean(RateLimitRetryInterceptor.class).isSameAs(own);
				assertThat(restClientInterceptors(context)).containsExactly(own);
			});
	}

	@Test
	void worksWhenServerSideRateLimitingIsOff() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.enabled=false", "ratelimit.client.retry.enabled=true")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitRetryInterceptor.class)
				.hasSingleBean(RateLimitClientProperties.class)
				.doesNotHaveBean(RateLimitProperties.class));
	}

	@Test
	void offersOnlyTheInterceptorWithoutTheRestClientModule() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitClientAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.restclient"))
			.withPropertyValues("ratelimit.client.retry.enabled=true")
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(RateLimitRetryInterceptor.class)
				.doesNotHaveBean("rateLimitRetryRestClientCustomizer")
				.doesNotHaveBean("rateLimitRetryRestTemplateCustomizer"));
	}

	@Test
	void backsOffWithoutSpringWeb() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitClientAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(ClientHttpRequestInterceptor.class))
			.withPropertyValues("ratelimit.client.retry.enabled=true")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitRetryInterceptor.class));
	}

	@Test
	void registersOneCustomizerForEachBuilder() {
		this.contextRunner.withPropertyValues("ratelimit.client.retry.enabled=true")
			.run((context) -> assertThat(context).hasSingleBean(RestClientCustomizer.class)
				.hasSingleBean(RestTemplateCustomizer.class));
	}

	@Test
	void failsAtStartupNamingTheBadProperty() {
		assertFailure("ratelimit.client.retry.max-attempts=0", "ratelimit.client.retry.max-attempts");
		assertFailure("ratelimit.client.retry.max-total-time=0s", "ratelimit.client.retry.max-total-time");
		assertFailure("ratelimit.client.retry.initial-delay=-1s", "ratelimit.client.retry.initial-delay");
		assertFailure("ratelimit.client.retry.max-delay=50ms", "ratelimit.client.retry.max-delay");
		assertFailure("ratelimit.client.retry.multiplier=0.5", "ratelimit.client.retry.multiplier");
		assertFailure("ratelimit.client.retry.methods=GET,G ET", "ratelimit.client.retry.methods[1]");
		assertFailure("ratelimit.client.retry.methods=", "ratelimit.client.retry.methods");
		assertFailure("ratelimit.client.retry.statuses=429,200", "ratelimit.client.retry.statuses[1]");
	}

	@Test
	void failsAtStartupOnAMisspelledEnabledFlag() {
		this.contextRunner.withPropertyValues("ratelimit.client.retry.enabled=ture")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("ratelimit.client.retry.enabled"));
	}

	private void assertFailure(String property, String origin) {
		this.contextRunner.withPropertyValues("ratelimit.client.retry.enabled=true", property).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			FailureAnalysis analysis = new RateLimitConfigurationFailureAnalyzer().analyze(failure);
			assertThat(analysis).as(property).isNotNull();
			assertThat(analysis.getCause()).isInstanceOf(RateLimitConfigurationException.class);
			assertThat(((RateLimitConfigurationException) analysis.getCause()).getOrigin()).isEqualTo(origin);
			assertThat(analysis.getDescription()).contains(origin);
			assertThat(analysis.getAction()).isNotBlank();
		});
	}

	private static List<ClientHttpRequestInterceptor> restClientInterceptors(AssertableApplicationContext context) {
		List<ClientHttpRequestInterceptor> interceptors = new ArrayList<>();
		context.getBean(RestClient.Builder.class).requestInterceptors(interceptors::addAll);
		return interceptors;
	}

}
