package io.github.ratelimit.internal.client;

import java.net.URI;
import java.util.Random;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpMethod;
import org.springframework.mock.http.client.MockClientHttpRequest;

import io.github.ratelimit.internal.core.RateLimitClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the retries say about a request in their messages and logs.
 */
class RetryAttemptsTests {

	@Test
	void describesARequestWithoutItsUserInfoOrQuery() {
		MockClientHttpRequest request = new MockClientHttpRequest(HttpMethod.GET,
				URI.create("https://bob:secret@api.example.com:8443/v1/items?api_key=s3cret&page=2"));
		RetryAttempts attempts = new RetryAttempts(request, RetrySettings.defaults(),
				new RetrySources(RateLimitClock.system(), (delay) -> {
				}, new Random(1)));
		assertThat(attempts.describe()).isEqualTo("GET https://api.example.com:8443/v1/items")
			.doesNotContain("secret", "s3cret");
	}

}
