package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.internal.overload.OverloadLimiter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Overload protection on a real server, with the limit pinned at 10 (AIMD with equal
 * bounds), so that the shares are certain: sheddable requests fit 7 in flight, normal ones
 * 8, critical ones all 10. Handlers stay in flight until the test lets them go. A critical
 * request that finds the limit full waits for a place up to {@value #CRITICAL_WAIT}.
 */
abstract class OverloadBehaviourTests {

	/** Long enough for a test to free a place while a request waits, on a busy machine too. */
	static final String CRITICAL_WAIT = "2s";

	@LocalServerPort
	int port;

	@Autowired
	OverloadLimiter limiter;

	@Autowired
	MeterRegistry meterRegistry;

	OverloadClient http;

	@BeforeEach
	void holdHandlers() {
		this.http = new OverloadClient(this.port, this.limiter::inFlight);
		HeldCalls.close();
		OverloadClient.awaitInFlight(this.limiter::inFlight, 0);
	}

	@AfterEach
	void releaseHandlers() {
		HeldCalls.open();
		OverloadClient.awaitInFlight(this.limiter::inFlight, 0);
	}

	@Test
	void shedsSheddableRequestsFirstAndRanksThemByEverySource() throws Exception {
		assertThat(this.limiter.limit()).isEqualTo(10);
		List<CompletableFuture<HttpResponse<String>>> held = this.http.hold(7);
		// sheddable by its class's annotation: its share (7) is full
		HttpResponse<String> shed = this.http.get("/search");
		assertThat(shed.statusCode()).isEqualTo(503);
		assertThat(shed.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(shed.headers().firstValue("Cache-Control")).hasValue("no-store");
		assertThat(shed.headers().firstValue("Content-Type")).hasValueSatisfying(
				(type) -> assertThat(type).startsWith("application/problem+json"));
		JsonNode problem = JsonMapper.shared().readTree(shed.body());
		assertThat(problem.get("type").asString())
			.isEqualTo("https://iana.org/assignments/http-problem-types#temporary-reduced-capacity");
		assertThat(problem.get("status").asInt()).isEqualTo(503);
		assertThat(problem.get("title").asString()).isNotBlank();
		assertThat(problem.get("detail").asString()).contains("sheddable");
		// normal by default: its share (8) is not full
		assertThat(this.http.get("/quick").statusCode()).isEqualTo(200);
		// the method's annotation beats its class's
		assertThat(this.http.get("/search/urgent").statusCode()).isEqualTo(200);
		// a configured route
		assertThat(this.http.get("/reports/1").statusCode()).isEqualTo(503);
		// the configured header beats the route, the annotation and the default
		assertThat(this.http.get("/reports/1", "X-Priority", "critical").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/search/urgent", "X-Priority", "sheddable").statusCode()).isEqualTo(503);
		assertThat(this.http.get("/quick", "X-Priority", "Sheddable").statusCode()).isEqualTo(503);
		// a value naming no priority is no priority: the next source decides
		assertThat(this.http.get("/quick", "X-Priority", "urgent").statusCode()).isEqualTo(200);
		// a resolver bean beats everything else
		assertThat(this.http.get("/search", "X-Vip", "yes", "X-Priority", "sheddable").statusCode()).isEqualTo(200);
		assertThat(this.limiter.inFlight()).isEqualTo(7);
		HeldCalls.open();
		for (CompletableFuture<HttpResponse<String>> request : held) {
			assertThat(request.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
	}

	@Test
	void criticalRequestsKeepTheirReserveAndTheActuatorIsNeverShed() {
		this.http.hold(8);
		assertThat(this.http.get("/quick").statusCode()).isEqualTo(503);
		assertThat(this.http.get("/quick").body()).contains("normal");
		assertThat(this.http.get("/search/urgent").statusCode()).isEqualTo(200);
		this.http.hold(2, "X-Priority", "critical");
		HttpResponse<String> full = this.http.get("/search/urgent");
		assertThat(full.statusCode()).isEqualTo(503);
		assertThat(full.body()).contains("critical");
		// neither counted nor shed
		assertThat(this.http.get("/actuator/health").statusCode()).isEqualTo(200);
		assertThat(this.http.get("/internal/ping").statusCode()).isEqualTo(200);
		assertThat(this.limiter.inFlight()).isEqualTo(10);
	}

	@Test
	void metersAndTheEndpointShowTheLimitTheCallsInFlightAndTheShedRequests() throws Exception {
		double shedBefore = shedCount("sheddable", "shed");
		this.http.hold(7);
		assertThat(this.http.get("/search").statusCode()).isEqualTo(503);
		assertThat(shedCount("sheddable", "shed")).isEqualTo(shedBefore + 1);
		assertThat(this.meterRegistry.get("ratelimit.overload.limit").gauge().value()).isEqualTo(10);
		assertThat(this.meterRegistry.get("ratelimit.overload.in.flight").gauge().value()).isEqualTo(7);
		HttpResponse<String> endpoint = this.http.get("/actuator/ratelimits");
		assertThat(endpoint.statusCode()).isEqualTo(200);
		JsonNode overload = JsonMapper.shared().readTree(endpoint.body()).get("overload");
		assertThat(overload.get("enabled").asBoolean()).isTrue();
		assertThat(overload.get("shadow").asBoolean()).isFalse();
		assertThat(overload.get("algorithm").asString()).isEqualTo("AIMD");
		assertThat(overload.get("limit").asInt()).isEqualTo(10);
		assertThat(overload.get("inFlight").asInt()).isEqualTo(7);
		assertThat(overload.get("shed").get("sheddable").asLong())
			.isEqualTo(this.limiter.shed(io.github.ratelimit.RequestPriority.SHEDDABLE))
			.isPositive();
		assertThat(JsonMapper.shared().convertValue(overload.get("shed"), Map.class)).containsOnlyKeys("critical",
				"normal", "sheddable");
	}

	@Test
	void aCriticalRequestAtAFullLimitWaitsAndGetsInWhenAPlaceFrees() throws Exception {
		double admittedBefore = waitedCount("admitted");
		List<CompletableFuture<HttpResponse<String>>> held = this.http.hold(8);
		held.addAll(this.http.hold(2, "X-Priority", "critical"));
		CompletableFuture<HttpResponse<String>> waiting = this.http.send("/quick", "X-Priority", "critical");
		awaitWaiting(1);
		// while a critical request waits, no lower priority request gets a place
		assertThat(this.http.get("/quick").statusCode()).isEqualTo(503);
		HeldCalls.open();
		HttpResponse<String> admitted = waiting.get(30, TimeUnit.SECONDS);
		assertThat(admitted.statusCode()).isEqualTo(200);
		assertThat(waitedCount("admitted")).isEqualTo(admittedBefore + 1);
		for (CompletableFuture<HttpResponse<String>> request : held) {
			assertThat(request.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
	}

	@Test
	void aCriticalRequestWaitingLongerThanTheCriticalWaitIsShedOnce() {
		double shedBefore = shedCount("critical", "shed");
		double shedWaitBefore = shedCount("critical", "shed", "wait");
		double waitedShedBefore = waitedCount("shed");
		this.http.hold(10, "X-Priority", "critical");
		HttpResponse<String> shed = this.http.get("/quick", "X-Priority", "critical");
		assertThat(shed.statusCode()).isEqualTo(503);
		assertThat(shed.body()).contains("critical");
		assertThat(shedCount("critical", "shed")).isEqualTo(shedBefore + 1);
		assertThat(shedCount("critical", "shed", "wait")).isEqualTo(shedWaitBefore + 1);
		assertThat(waitedCount("shed")).isEqualTo(waitedShedBefore + 1);
		assertThat(this.limiter.waiting()).isZero();
		assertThat(this.limiter.inFlight()).isEqualTo(10);
	}

	void awaitWaiting(int count) {
		OverloadClient.awaitInFlight(this.limiter::waiting, count);
	}

	double waitedCount(String result) {
		return this.meterRegistry.get("ratelimit.overload.waited").tag("result", result).functionCounter().count();
	}

	double shedCount(String priority, String result) {
		return this.meterRegistry.get("ratelimit.overload.shed")
			.tag("priority", priority)
			.tag("result", result)
			.functionCounters()
			.stream()
			.mapToDouble(FunctionCounter::count)
			.sum();
	}

	double shedCount(String priority, String result, String reason) {
		return this.meterRegistry.get("ratelimit.overload.shed")
			.tag("priority", priority)
			.tag("result", result)
			.tag("reason", reason)
			.functionCounter()
			.count();
	}

}
