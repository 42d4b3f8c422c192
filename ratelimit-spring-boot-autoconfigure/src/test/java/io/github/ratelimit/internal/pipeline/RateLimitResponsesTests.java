package io.github.ratelimit.internal.pipeline;

import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletResponse;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.CalendarPeriod;
import io.github.ratelimit.FailMode;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;

import static org.assertj.core.api.Assertions.assertThat;

class RateLimitResponsesTests {

	private static final RateLimit ORDERS = new RateLimit("orders", Algorithm.FIXED_WINDOW, 10, 0,
			Duration.ofMinutes(1));

	private static final RateLimit BURST = new RateLimit("burst", Algorithm.TOKEN_BUCKET, 5, 5, Duration.ofSeconds(1));

	private static final RateLimit CANDIDATE = new RateLimit("orders" + RateLimit.CANDIDATE_SUFFIX,
			Algorithm.SLIDING_WINDOW_COUNTER, 20, 0, Duration.ofMinutes(1), FailMode.OPEN, true);

	private final RateLimitResponses writer = new RateLimitResponses(HeaderStyle.IETF);

	@Test
	void advertisesOneDecisionAlone() {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.writer.headers(List.of(allowed(ORDERS, 7, 30_000_000)), response::setHeader);
		assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"orders\";q=10;w=60");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"orders\";r=7;t=30");
		// a name is an sf-string in both headers, escaped
		RateLimit quoted = RateLimit.of("GET /say/\"hi\"", Algorithm.TOKEN_BUCKET, 5, Duration.ofSeconds(10));
		this.writer.headers(List.of(allowed(quoted, 4, 2_000_000)), response::setHeader);
		assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"GET /say/\\\"hi\\\"\";q=5;w=10");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"GET /say/\\\"hi\\\"\";r=4;t=2");
	}

	@Test
	void advertisesALimitOnCallsInFlightInConcurrentRequestsWithoutAWindow() {
		MockHttpServletResponse response = new MockHttpServletResponse();
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));
		this.writer.headers(List.of(allowed(exports, 1, 0), allowed(ORDERS, 7, 30_000_000)), response::setHeader);
		assertThat(response.getHeader("RateLimit-Policy"))
			.isEqualTo("\"exports\";q=2;qu=\"concurrent-requests\", \"orders\";q=10;w=60");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"exports\";r=1;t=0, \"orders\";r=7;t=30");
	}

	@Test
	void advertisesTheUnitOfALimitThatCountsSomethingElseThanRequestsBesideTheRequestLimits() {
		RateLimitResponses writer = new RateLimitResponses(HeaderStyle.IETF,
				Map.of("chat-tokens", "tokens", "chat", "requests")::get);
		RateLimit chat = RateLimit.of("chat", Algorithm.FIXED_WINDOW, 60, Duration.ofMinutes(1));
		RateLimit tokens = RateLimit.of("chat-tokens", Algorithm.TOKEN_BUCKET, 100_000, Duration.ofMinutes(1));
		MockHttpServletResponse response = new MockHttpServletResponse();
		writer.headers(List.of(allowed(chat, 59, 60_000_000), allowed(tokens, 99_500, 300_000)), response::setHeader);
		// each item is keyed by its limit's name: clients tell the tokens from the requests
		assertThat(response.getHeader("RateLimit-Policy"))
			.isEqualTo("\"chat\";q=60;w=60, \"chat-tokens\";q=100000;qu=\"tokens\";w=60");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"chat\";r=59;t=60, \"chat-tokens\";r=99500;t=1");
		ProblemResponse rejected = writer
			.rejection(List.of(new RateLimitDecision(tokens, false, 200, 3_000_000, 3_000_000, 0)));
		assertThat(rejected.headers())
			.containsEntry("RateLimit-Policy", "\"chat-tokens\";q=100000;qu=\"tokens\";w=60")
			.containsEntry("RateLimit", "\"chat-tokens\";r=200;t=3")
			.containsEntry("Retry-After", "3");
	}

	@Test
	void asksForTheUnitOfALimitOnceWhateverItsPlanOrPathOfRendering() {
		AtomicInteger asked = new AtomicInteger();
		RateLimitResponses writer = new RateLimitResponses(HeaderStyle.IETF, (name) -> {
			asked.incrementAndGet();
			return "content-bytes";
		});
		RateLimit free = RateLimit.of("uploads", Algorithm.TOKEN_BUCKET, 1_000, Duration.ofMinutes(1));
		RateLimit pro = RateLimit.of("uploads", Algorithm.TOKEN_BUCKET, 50_000, Duration.ofMinutes(1));
		for (int i = 0; i < 3; i++) {
			assertThat(policy(writer, allowed(free, 10, 1_000_000))).isEqualTo("\"uploads\";q=1000;qu=\"content-bytes\";w=60");
			assertThat(policy(writer, allowed(pro, 10, 1_000_000)))
				.isEqualTo("\"uploads\";q=50000;qu=\"content-bytes\";w=60");
			MockHttpServletResponse response = new MockHttpServletResponse();
			writer.headers(free, 10, 1_000_000, 60_000_000, (name, value) -> response.setHeader(name, value.toString()));
			assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"uploads\";q=1000;qu=\"content-bytes\";w=60");
			assertThat(response.getHeader("RateLimit")).isEqualTo("\"uploads\";r=10;t=1");
		}
		assertThat(asked).hasValue(1);
	}

	@Test
	void aLimitOnCallsInFlightCountsConcurrentRequestsWhateverUnitIsGiven() {
		RateLimitResponses writer = new RateLimitResponses(HeaderStyle.IETF, (name) -> "tokens");
		RateLimit exports = RateLimit.of("exports", Algorithm.CONCURRENCY, 2, Duration.ofMinutes(1));
		assertThat(policy(writer, allowed(exports, 1, 0))).isEqualTo("\"exports\";q=2;qu=\"concurrent-requests\"");
	}

	@Test
	void singleLimitStylesHaveNoUnitToSay() {
		RateLimit tokens = RateLimit.of("chat-tokens", Algorithm.TOKEN_BUCKET, 100_000, Duration.ofMinutes(1));
		for (HeaderStyle style : List.of(HeaderStyle.DRAFT_06, HeaderStyle.X_RATELIMIT)) {
			String prefix = (style == HeaderStyle.X_RATELIMIT) ? "X-RateLimit-" : "RateLimit-";
			RateLimitResponses writer = new RateLimitResponses(style, (name) -> "tokens");
			MockHttpServletResponse response = new MockHttpServletResponse();
			writer.headers(List.of(allowed(tokens, 99_500, 300_000)), response::setHeader);
			assertThat(response.getHeader(prefix + "Limit")).isEqualTo("100000");
			assertThat(response.getHeader(prefix + "Remaining")).isEqualTo("99500");
			assertThat(response.getHeader(prefix + "Reset")).isEqualTo("1");
			assertThat(response.getHeader("RateLimit-Policy")).isNull();
		}
	}

	@Test
	void policyFollowsThePlanAndTheCalendarWindowOfEachDecisionOfOneLimit() {
		RateLimit free = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 10, Duration.ofMinutes(1));
		RateLimit pro = RateLimit.of("orders", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1));
		RateLimit daily = RateLimit.calendar("daily", 100, CalendarPeriod.DAY, ZoneId.of("Europe/Berlin"));
		long hour = 3_600_000_000L;
		for (int round = 0; round < 2; round++) {
			assertThat(policy(allowed(free, 9, 6_000_000))).isEqualTo("\"orders\";q=10;w=60");
			assertThat(policy(allowed(pro, 99, 600_000))).isEqualTo("\"orders\";q=100;w=60");
			assertThat(policy(new RateLimitDecision(daily, true, 99, hour, 0, 0, 23 * hour)))
				.isEqualTo("\"daily\";q=100;w=82800");
			assertThat(policy(new RateLimitDecision(daily, true, 99, hour, 0, 0, 24 * hour)))
				.isEqualTo("\"daily\";q=100;w=86400");
		}
	}

	@Test
	void namesBeyondTheCacheBoundAreRenderedEachTimeAndNotKept() {
		int names = RateLimitResponses.MAX_CACHED_NAMES + 50;
		for (int round = 0; round < 2; round++) {
			for (int i = 0; i < names; i++) {
				RateLimit limit = RateLimit.of("route-" + i, Algorithm.FIXED_WINDOW, 10 + round, Duration.ofMinutes(1));
				MockHttpServletResponse response = new MockHttpServletResponse();
				this.writer.headers(List.of(allowed(limit, 3, 2_000_000)), response::setHeader);
				assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"route-" + i + "\";q=" + (10 + round) + ";w=60");
				assertThat(response.getHeader("RateLimit")).isEqualTo("\"route-" + i + "\";r=3;t=2");
			}
		}
		assertThat(this.writer.cachedNames()).isEqualTo(RateLimitResponses.MAX_CACHED_NAMES);
	}

	private String policy(RateLimitDecision decision) {
		return policy(this.writer, decision);
	}

	private static String policy(RateLimitResponses writer, RateLimitDecision decision) {
		MockHttpServletResponse response = new MockHttpServletResponse();
		writer.headers(List.of(decision), response::setHeader);
		return response.getHeader("RateLimit-Policy");
	}

	@Test
	void advertisesEveryLimitInOrderAndEachItemOnce() {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.writer.headers(List.of(allowed(ORDERS, 7, 30_000_000), allowed(BURST, 3, 400_000), allowed(ORDERS, 7, 30_000_000)), response::setHeader);
		assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"orders\";q=10;w=60, \"burst\";q=5;w=1");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"orders\";r=7;t=30, \"burst\";r=3;t=1");
	}

	@Test
	void advertisesTheLengthOfTheCalendarWindowTheDecisionWasTakenIn() {
		RateLimit daily = RateLimit.calendar("daily", 100, CalendarPeriod.DAY, ZoneId.of("Europe/Berlin"));
		long hour = 3_600_000_000L;
		// the day summer time begins, an hour and a half before midnight
		RateLimitDecision rejected = new RateLimitDecision(daily, false, 0, 90 * 60_000_000L, 90 * 60_000_000L, 0,
				23 * hour);
		ProblemResponse problem = this.writer.rejection(List.of(rejected));
		assertThat(problem.headers()).containsEntry("RateLimit-Policy", "\"daily\";q=100;w=82800")
			.containsEntry("RateLimit", "\"daily\";r=0;t=5400")
			.containsEntry("Retry-After", "5400");
	}

	@Test
	void neverAdvertisesACandidate() {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.writer.headers(List.of(allowed(CANDIDATE, 19, 1_000_000), allowed(ORDERS, 7, 30_000_000)), response::setHeader);
		assertThat(response.getHeader("RateLimit-Policy")).isEqualTo("\"orders\";q=10;w=60");
		assertThat(response.getHeader("RateLimit")).isEqualTo("\"orders\";r=7;t=30");
	}

	@Test
	void writesNoHeaderWhenOnlyCandidatesDecided() {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.writer.headers(List.of(allowed(CANDIDATE, 19, 1_000_000)), response::setHeader);
		assertThat(response.getHeaderNames()).isEmpty();
	}

	private static RateLimitDecision allowed(RateLimit limit, long remaining, long resetMicros) {
		return new RateLimitDecision(limit, true, remaining, resetMicros, 0, 0);
	}

}
