package io.github.ratelimit.internal.client;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

class ServerDelaysTests {

	private static final Instant NOW = Instant.parse("1994-11-06T08:49:30Z");

	@Test
	void readsDelaySeconds() {
		assertThat(ServerDelays.of(headers("Retry-After", "120"), NOW)).isEqualTo(Duration.ofSeconds(120));
		assertThat(ServerDelays.of(headers("Retry-After", " 0 "), NOW)).isEqualTo(Duration.ZERO);
	}

	@Test
	void readsDelaySecondsTooLargeForALongAsEndless() {
		assertThat(ServerDelays.of(headers("Retry-After", "99999999999999999999999"), NOW))
			.isEqualTo(Duration.ofSeconds(Long.MAX_VALUE));
	}

	@Test
	void readsEveryHttpDateFormatAgainstTheLocalClock() {
		assertThat(ServerDelays.of(headers("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"), NOW))
			.isEqualTo(Duration.ofSeconds(7));
		assertThat(ServerDelays.of(headers("Retry-After", "Sunday, 06-Nov-94 08:49:37 GMT"), NOW))
			.isEqualTo(Duration.ofSeconds(7));
		assertThat(ServerDelays.of(headers("Retry-After", "Sun Nov  6 08:49:37 1994"), NOW))
			.isEqualTo(Duration.ofSeconds(7));
	}

	@Test
	void measuresAnHttpDateFromTheDateHeaderWhenPresent() {
		HttpHeaders headers = headers("Retry-After", "Sun, 06 Nov 1994 08:50:00 GMT", "Date",
				"Sun, 06 Nov 1994 08:49:50 GMT");
		assertThat(ServerDelays.of(headers, NOW)).isEqualTo(Duration.ofSeconds(10));
	}

	@Test
	void treatsAnHttpDateInThePastAsNoWait() {
		assertThat(ServerDelays.of(headers("Retry-After", "Sun, 06 Nov 1994 08:00:00 GMT"), NOW))
			.isEqualTo(Duration.ZERO);
	}

	@Test
	void ignoresValuesThatAreNeitherSecondsNorDates() {
		assertThat(ServerDelays.of(headers("Retry-After", "-5"), NOW)).isNull();
		assertThat(ServerDelays.of(headers("Retry-After", "soon"), NOW)).isNull();
		assertThat(ServerDelays.of(headers("Retry-After", "1.5"), NOW)).isNull();
		assertThat(ServerDelays.of(new HttpHeaders(), NOW)).isNull();
	}

	@Test
	void takesTheLargestResetAmongPoliciesWithNoQuotaLeft() {
		assertThat(ServerDelays.of(headers("RateLimit", "\"a\";r=0;t=4, \"b\";r=1;t=50, \"c\";r=0;t=9"), NOW))
			.isEqualTo(Duration.ofSeconds(9));
	}

	@Test
	void combinesRateLimitFieldLinesIntoOneList() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("RateLimit", "\"minute\";r=0;t=20");
		headers.add("RateLimit", "\"day\";r=0;t=30");
		assertThat(ServerDelays.of(headers, NOW)).isEqualTo(Duration.ofSeconds(30));
	}

	@Test
	void namesNoDelayWhenEveryPolicyHasQuotaLeft() {
		assertThat(ServerDelays.of(headers("RateLimit", "\"a\";r=3;t=4"), NOW)).isNull();
		assertThat(ServerDelays.of(headers("RateLimit", "\"a\";t=4"), NOW)).isNull();
	}

	@Test
	void readsPoliciesNamedByTokensWithOtherParameters() {
		assertThat(ServerDelays.of(headers("RateLimit", "default;r=0;t=6;pk=:cHJvZ3JhbW1pbmc=:;x=?1;w=1.5"), NOW))
			.isEqualTo(Duration.ofSeconds(6));
	}

	@Test
	void ignoresARateLimitFieldThatIsNotAStructuredList() {
		assertThat(ServerDelays.of(headers("RateLimit", "\"a\";r=0;t=6,"), NOW)).isNull();
		assertThat(ServerDelays.of(headers("RateLimit", "\"a\";r=0;t=6 \"b\""), NOW)).isNull();
		assertThat(ServerDelays.of(headers("RateLimit", "\"a;r=0;t=6"), NOW)).isNull();
		assertThat(ServerDelays.of(headers("RateLimit", "limit=100, remaining=0, reset=6"), NOW)).isNull();
	}

	@Test
	void waitsForTheLongerOfRetryAfterAndTheRateLimitReset() {
		assertThat(ServerDelays.of(headers("Retry-After", "5", "RateLimit", "\"a\";r=0;t=8"), NOW))
			.isEqualTo(Duration.ofSeconds(8));
		assertThat(ServerDelays.of(headers("Retry-After", "9", "RateLimit", "\"a\";r=0;t=8"), NOW))
			.isEqualTo(Duration.ofSeconds(9));
	}

	private static HttpHeaders headers(String... namesAndValues) {
		HttpHeaders headers = new HttpHeaders();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			headers.add(namesAndValues[i], namesAndValues[i + 1]);
		}
		return headers;
	}

}
