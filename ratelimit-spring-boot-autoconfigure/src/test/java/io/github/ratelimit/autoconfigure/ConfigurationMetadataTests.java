package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.io.ClassPathResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * IDE completion depends on the metadata generated at build time: every property with a
 * description, and value hints for the enum-like ones.
 */
class ConfigurationMetadataTests {

	@Test
	@SuppressWarnings("unchecked")
	void everyPropertyIsDescribedAndEnumLikeOnesHaveHints() throws IOException {
		Map<String, Object> metadata = metadata();
		List<Map<String, Object>> properties = (List<Map<String, Object>>) metadata.get("properties");
		assertThat(properties).extracting((property) -> property.get("name"))
			.contains("ratelimit.enabled", "ratelimit.store", "ratelimit.default-key", "ratelimit.fail-mode",
					"ratelimit.fallback-factor", "ratelimit.headers", "ratelimit.tenant.header",
					"ratelimit.tenant.pattern", "ratelimit.client-ip.trusted-proxies",
					"ratelimit.client-ip.ipv6-prefix-length", "ratelimit.policies", "ratelimit.routes");
		assertThat(properties).allSatisfy((property) -> assertThat((String) property.get("description")).isNotBlank());
		List<Map<String, Object>> hints = (List<Map<String, Object>>) metadata.get("hints");
		assertThat(hints).extracting((hint) -> hint.get("name"))
			.contains("ratelimit.store", "ratelimit.headers", "ratelimit.fail-mode", "ratelimit.default-key",
					"ratelimit.policies.values.algorithm");
		Map<String, Object> headers = hints.stream()
			.filter((hint) -> "ratelimit.headers".equals(hint.get("name")))
			.findFirst()
			.orElseThrow();
		assertThat((List<Map<String, Object>>) headers.get("values")).extracting((value) -> value.get("value"))
			.containsExactly("ietf", "draft-06", "x-ratelimit", "none");
	}

	@Test
	void everyDescriptionIsOnePlainSentenceThatFitsATooltip() throws IOException {
		assertThat(properties()).isNotEmpty().allSatisfy((property) -> {
			String description = (String) property.get("description");
			assertThat(description).as((String) property.get("name"))
				.hasSizeLessThanOrEqualTo(120)
				.doesNotStartWith("The ")
				.endsWith(".");
			if ("java.lang.Boolean".equals(property.get("type"))) {
				assertThat(description).as((String) property.get("name")).startsWith("Whether ");
			}
		});
	}

	@Test
	void defaultsInTheMetadataAreTheDefaultsOfTheProperties() throws IOException {
		Map<String, Object> defaults = new LinkedHashMap<>();
		properties().forEach((property) -> defaults.put((String) property.get("name"), property.get("defaultValue")));
		RateLimitProperties properties = new RateLimitProperties();
		RateLimitClientProperties.Retry retry = new RateLimitClientProperties().getRetry();
		assertThat(defaults.get("ratelimit.default-key")).isEqualTo(properties.getDefaultKey()
			.stream()
			.map((source) -> source.name().toLowerCase(Locale.ROOT))
			.toList());
		assertThat(defaults.get("ratelimit.filter-order")).isEqualTo(properties.getFilterOrder());
		assertThat(defaults.get("ratelimit.fallback-factor")).isEqualTo(properties.getFallbackFactor());
		assertThat(defaults.get("ratelimit.redis.timeout")).isEqualTo("250ms");
		assertThat(defaults.get("ratelimit.client.retry.methods")).isEqualTo(retry.getMethods());
		assertThat(defaults.get("ratelimit.client.retry.statuses")).isEqualTo(retry.getStatuses());
		assertThat(defaults.get("ratelimit.client.retry.max-attempts")).isEqualTo(retry.getMaxAttempts());
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> properties() throws IOException {
		List<Map<String, Object>> properties = (List<Map<String, Object>>) metadata().get("properties");
		return properties.stream().filter((property) -> ((String) property.get("name")).startsWith("ratelimit.")).toList();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> metadata() throws IOException {
		try (InputStream in = new ClassPathResource("META-INF/spring-configuration-metadata.json").getInputStream()) {
			return JsonMapper.builder().build().readValue(in, Map.class);
		}
	}

}
