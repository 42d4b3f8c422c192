package io.github.ratelimit.e2e;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.github.ratelimit.RequestPriority;
import io.github.ratelimit.internal.overload.OverloadLimiter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the adaptive limit learns from on a real server: AIMD between 2 and 20, starting
 * at 20, in shadow mode. Failures of the service (5xx, exceptions) lower it; what clients
 * cause (4xx, 429) does not; shadow mode admits what it would shed and counts it.
 */
abstract class OverloadLearningTests {

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
	void serverErrorsLowerTheLimit() {
		int before = this.limiter.limit();
		assertThat(this.http.get("/status/500").statusCode()).isEqualTo(500);
		awaitLimitBelow(before);
		int afterStatus = this.limiter.limit();
		assertThat(this.http.get("/status/503").statusCode()).isEqualTo(503);
		awaitLimitBelow(afterStatus);
	}

	@Test
	void exceptionsLowerTheLimit() {
		int before = this.limiter.limit();
		assertThat(this.http.get("/boom").statusCode()).isEqualTo(500);
		awaitLimitBelow(before);
	}

	@Test
	void clientErrorsAndRejectionsLeaveTheLimitAlone() {
		int before = this.limiter.limit();
		assertThat(this.http.get("/status/404").statusCode()).isEqualTo(404);
		assertThat(this.http.get("/status/400").statusCode()).isEqualTo(400);
		assertThat(this.http.get("/status/429").statusCode()).isEqualTo(429);
		// requests on one connection are handled in turn: the ones before have been released
		assertThat(this.http.get("/quick").statusCode()).isEqualTo(200);
		OverloadClient.awaitInFlight(this.limiter::inFlight, 0);
		assertThat(this.limiter.limit()).isEqualTo(before);
	}

	@Test
	void shadowModeAdmitsWhatItWouldShedAndCountsIt() throws Exception {
		double countedBefore = this.meterRegistry.get("ratelimit.overload.shed")
			.tag("priority", "sheddable")
			.tag("result", "shadow_shed")
			.functionCounter()
			.count();
		long shedBefore = this.limiter.shed(RequestPriority.SHEDDABLE);
		// held calls teach the limit nothing until they end: the share is read once they are in
		List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
		while (held.size() < (int) Math.floor(this.limiter.limit() * 0.7)) {
			held.addAll(this.http.hold((int) Math.floor(this.limiter.limit() * 0.7) - held.size()));
		}
		assertThat(this.http.get("/search").statusCode()).isEqualTo(200);
		assertThat(this.limiter.shed(RequestPriority.SHEDDABLE)).isEqualTo(shedBefore + 1);
		assertThat(this.meterRegistry.get("ratelimit.overload.shed")
			.tag("priority", "sheddable")
			.tag("result", "shadow_shed")
			.functionCounter()
			.count()).isEqualTo(countedBefore + 1);
		HeldCalls.open();
		for (CompletableFuture<HttpResponse<String>> request : held) {
			assertThat(request.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
	}

	/** The limit learns as the request is released, which may be just after the client has its answer. */
	void awaitLimitBelow(int limit) {
		org.awaitility.Awaitility.await()
			.atMost(java.time.Duration.ofSeconds(10))
			.until(() -> this.limiter.limit() < limit);
	}

}
