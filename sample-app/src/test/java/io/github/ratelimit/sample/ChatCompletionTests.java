package io.github.ratelimit.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;

import io.github.ratelimit.sample.SampleApplicationTests.ManualClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chat completion endpoint over HTTP: per tenant, 20 requests a minute, 2,000 tokens a
 * minute and 50,000 tokens a calendar month ({@code application.yml}). Each call reserves
 * its prompt plus {@code max_tokens} and settles the tokens it used. Rate limit time only
 * moves when a test moves it, and each test uses tenants of its own.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@Import(SampleApplicationTests.ManualClockConfiguration.class)
class ChatCompletionTests {

	private static final int TOKENS_PER_MINUTE = 2000;

	private static final int TOKENS_PER_MONTH = 50_000;

	/** 6 words: the prompt tokens. */
	private static final String HELLO = "Hello there, how are you today?";

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	@LocalServerPort
	private int port;

	@Autowired
	private ManualClock clock;

	@BeforeEach
	void startAMinuteLater() {
		// the limits every request passes (per client address) are full again
		this.clock.advance(Duration.ofMinutes(1));
	}

	@Test
	void tokensLeftAfterACallAreTheLimitLessWhatItUsed() throws Exception {
		HttpResponse<String> first = complete("settle", HELLO, 200);
		assertThat(first.statusCode()).isEqualTo(200);
		int used = JsonPath.read(first.body(), "$.usage.total_tokens");
		assertThat(used).isEqualTo(6 + 8);
		assertThat(JsonPath.<String>read(first.body(), "$.choices[0].message.content"))
			.isEqualTo("You said: " + HELLO);
		assertThat(member(first, "RateLimit-Policy", "chat-tokens"))
			.isEqualTo("\"chat-tokens\";q=2000;qu=\"tokens\";w=60");
		assertThat(member(first, "RateLimit-Policy", "chat-requests")).isEqualTo("\"chat-requests\";q=20;w=60");
		// while it runs, the call holds its estimate: prompt plus max_tokens
		assertThat(member(first, "RateLimit", "chat-tokens")).startsWith("\"chat-tokens\";r=" + (2000 - 206) + ";");

		HttpResponse<String> second = complete("settle", HELLO, 200);
		assertThat(member(second, "RateLimit", "chat-tokens"))
			.startsWith("\"chat-tokens\";r=" + (TOKENS_PER_MINUTE - used - 206) + ";");
		assertThat(member(second, "RateLimit", "chat-tokens-monthly"))
			.startsWith("\"chat-tokens-monthly\";r=" + (TOKENS_PER_MONTH - used - 206) + ";");
		assertThat(member(second, "RateLimit-Policy", "chat-tokens-monthly"))
			.startsWith("\"chat-tokens-monthly\";q=50000;qu=\"tokens\";");
	}

	@Test
	void theMonthBudgetOutlastsTheMinute() throws Exception {
		HttpResponse<String> first = complete("month", words(1000), 800);
		assertThat(JsonPath.<Integer>read(first.body(), "$.usage.total_tokens")).isEqualTo(1800);
		this.clock.advance(Duration.ofMinutes(1));
		HttpResponse<String> next = complete("month", HELLO, 200);
		// the minute's tokens are back, the month's are not
		assertThat(member(next, "RateLimit", "chat-tokens")).startsWith("\"chat-tokens\";r=" + (2000 - 206) + ";");
		assertThat(member(next, "RateLimit", "chat-tokens-monthly"))
			.startsWith("\"chat-tokens-monthly\";r=" + (TOKENS_PER_MONTH - 1800 - 206) + ";");
	}

	@Test
	void twentyRequestsAMinutePerTenant() throws Exception {
		for (int i = 0; i < 20; i++) {
			assertThat(complete("busy", "hi", 1).statusCode()).isEqualTo(200);
		}
		HttpResponse<String> refused = complete("busy", "hi", 1);
		assertThat(refused.statusCode()).isEqualTo(429);
		// a token back every 3 seconds
		assertThat(refused.headers().firstValue("Retry-After")).hasValue("3");
		assertThat(JsonPath.<Iterable<String>>read(refused.body(), "$.violated-policies"))
			.containsExactly("chat-requests");
		assertThat(complete("quiet", "hi", 1).statusCode()).isEqualTo(200);
	}

	@Test
	void aCallAskingMoreTokensThanLeftWaitsUntilItsReservationFits() throws Exception {
		assertThat(complete("greedy", words(1000), 800).statusCode()).isEqualTo(200);
		// 200 tokens left; asking for 1 + 400 needs 201 more, at 2000 a minute
		HttpResponse<String> refused = complete("greedy", "hi", 400);
		assertThat(refused.statusCode()).isEqualTo(429);
		long wait = (long) Math.ceil(201 / (TOKENS_PER_MINUTE / 60.0));
		assertThat(refused.headers().firstValue("Retry-After")).hasValue(Long.toString(wait));
		assertThat(JsonPath.<Iterable<String>>read(refused.body(), "$.violated-policies"))
			.containsExactly("chat-tokens");
		// a refused call takes nothing from the month
		assertThat(member(refused, "RateLimit", "chat-tokens-monthly"))
			.startsWith("\"chat-tokens-monthly\";r=" + (TOKENS_PER_MONTH - 1800) + ";");
		this.clock.advance(Duration.ofSeconds(wait - 1));
		assertThat(complete("greedy", "hi", 400).statusCode()).isEqualTo(429);
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(complete("greedy", "hi", 400).statusCode()).isEqualTo(200);
	}

	@Test
	void oneTenantsSpendingLeavesAnothersTokensAlone() throws Exception {
		assertThat(complete("spender", words(1000), 800).statusCode()).isEqualTo(200);
		HttpResponse<String> other = complete("saver", HELLO, 200);
		assertThat(member(other, "RateLimit", "chat-tokens")).startsWith("\"chat-tokens\";r=" + (2000 - 206) + ";");
		assertThat(member(other, "RateLimit", "chat-tokens-monthly"))
			.startsWith("\"chat-tokens-monthly\";r=" + (TOKENS_PER_MONTH - 206) + ";");
	}

	@Test
	void invalidRequestsAreRefusedAndCostNoTokens() throws Exception {
		assertThat(complete("careless", "hi", 0).statusCode()).isEqualTo(400);
		HttpResponse<String> tooMany = complete("careless", "hi", 4097);
		assertThat(tooMany.statusCode()).isEqualTo(400);
		assertThat(JsonPath.<String>read(tooMany.body(), "$.detail"))
			.isEqualTo("max_tokens must be between 1 and 4096: 4097");
		// refused after its estimate was reserved, it reports 0 tokens
		HttpResponse<String> streamed = send("/v1/chat/completions", "careless", "hi", 10, true);
		assertThat(streamed.statusCode()).isEqualTo(400);
		assertThat(JsonPath.<String>read(streamed.body(), "$.detail"))
			.isEqualTo("streamed completions are at POST /v1/chat/completions/stream");
		HttpResponse<String> next = complete("careless", HELLO, 200);
		assertThat(member(next, "RateLimit", "chat-tokens")).startsWith("\"chat-tokens\";r=" + (2000 - 206) + ";");
		assertThat(member(next, "RateLimit", "chat-tokens-monthly"))
			.startsWith("\"chat-tokens-monthly\";r=" + (TOKENS_PER_MONTH - 206) + ";");
	}

	@Test
	void aStreamSendsItsWordsThenItsUsageAndReservesItsEstimate() throws Exception {
		HttpResponse<String> stream = send("/v1/chat/completions/stream", "streamer", "Stream me a short answer", 200,
				true);
		assertThat(stream.statusCode()).isEqualTo(200);
		assertThat(stream.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("text/event-stream"));
		String[] events = Arrays.stream(stream.body().split("\n\n"))
			.filter((event) -> !event.isBlank())
			.map((event) -> event.substring("data:".length()))
			.toArray(String[]::new);
		assertThat(events).hasSize(7 + 3);
		assertThat(JsonPath.<String>read(events[0], "$.choices[0].delta.content")).isEqualTo("You ");
		assertThat(JsonPath.<String>read(events[7], "$.choices[0].finish_reason")).isEqualTo("stop");
		assertThat(JsonPath.<Integer>read(events[8], "$.usage.total_tokens")).isEqualTo(5 + 7);
		assertThat(events[9]).isEqualTo("[DONE]");
		assertThat(member(stream, "RateLimit-Policy", "chat-tokens"))
			.isEqualTo("\"chat-tokens\";q=2000;qu=\"tokens\";w=60");
		assertThat(member(stream, "RateLimit", "chat-tokens")).startsWith("\"chat-tokens\";r=" + (2000 - 205) + ";");
		assertThat(member(stream, "RateLimit", "chat-tokens-monthly"))
			.startsWith("\"chat-tokens-monthly\";r=" + (TOKENS_PER_MONTH - 205) + ";");
	}

	private HttpResponse<String> complete(String tenant, String content, int maxTokens)
			throws IOException, InterruptedException {
		return send("/v1/chat/completions", tenant, content, maxTokens, false);
	}

	private HttpResponse<String> send(String path, String tenant, String content, int maxTokens, boolean stream)
			throws IOException, InterruptedException {
		String json = "{\"model\":\"echo-1\",\"messages\":[{\"role\":\"user\",\"content\":\"" + content
				+ "\"}],\"max_tokens\":" + maxTokens + ",\"stream\":" + stream + "}";
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.timeout(Duration.ofSeconds(10))
			.header("X-Tenant-Id", tenant)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private static String words(int count) {
		return String.join(" ", Collections.nCopies(count, "word"));
	}

	private static String member(HttpResponse<?> response, String name, String limit) {
		String value = response.headers().firstValue(name).orElse(null);
		assertThat(value).as(name).isNotNull();
		return Arrays.stream(value.split(", "))
			.filter((member) -> member.startsWith("\"" + limit + "\";"))
			.findFirst()
			.orElse(null);
	}

}
