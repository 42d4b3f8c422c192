package io.github.ratelimit.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
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
		Map<String, Object> metadata;
		try (InputStream in = new ClassPathResource("META-INF/spring-configuration-metadata.json").getInputStream()) {
			metadata = JsonMapper.builder().build().readValue(in, Map.class);
		}
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

}
