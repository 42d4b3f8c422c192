package io.github.ratelimit.e2e;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.ActiveProfiles;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Overload protection on Netty, in front of reactive Spring Security, with BlockHound
 * watching the event loops.
 */
@SpringBootTest(classes = OverloadReactiveApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "ratelimit.overload.initial-limit=10",
				"ratelimit.overload.min-limit=10", "ratelimit.overload.max-limit=10",
				"ratelimit.overload.critical-wait=" + OverloadBehaviourTests.CRITICAL_WAIT })
@ActiveProfiles("overload")
class OverloadReactiveBehaviourTests extends OverloadBehaviourTests {

	@BeforeAll
	static void detectBlockingCalls() {
		OverloadBlockHound.install();
	}

	@Test
	void aCancelledExchangeGivesItsPlaceBack() throws Exception {
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(("GET /held HTTP/1.1\r\nHost: localhost\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
			out.flush();
			OverloadClient.awaitInFlight(this.limiter::inFlight, 1);
		}
		// the client went away: the exchange is cancelled and its place released
		OverloadClient.awaitInFlight(this.limiter::inFlight, 0);
	}

	@Test
	void anExchangeCancelledWhileItWaitsLeavesTheQueue() throws Exception {
		long shedBefore = this.limiter.shed(io.github.ratelimit.RequestPriority.CRITICAL);
		this.http.hold(10, "X-Priority", "critical");
		try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(("GET /quick HTTP/1.1\r\nHost: localhost\r\nX-Priority: critical\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			awaitWaiting(1);
		}
		// the client went away while it waited: no place is taken for it, none is counted shed
		awaitWaiting(0);
		assertThat(this.limiter.shed(io.github.ratelimit.RequestPriority.CRITICAL)).isEqualTo(shedBefore);
		HeldCalls.open();
		OverloadClient.awaitInFlight(this.limiter::inFlight, 0);
	}

	@Test
	void aStreamingResponseHoldsItsPlaceUntilItsBodyEnds() throws Exception {
		HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/stream"))
			.timeout(Duration.ofSeconds(30))
			.build();
		HttpResponse<InputStream> response = client.send(request, HttpResponse.BodyHandlers.ofInputStream());
		try (InputStream body = response.body()) {
			// the response has committed and its first event is on its way; the body goes on
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(this.limiter.inFlight()).isEqualTo(1);
			HeldCalls.open();
			String events = new String(body.readAllBytes(), StandardCharsets.UTF_8);
			assertThat(events).contains("data:start", "data:end");
		}
		OverloadClient.awaitInFlight(this.limiter::inFlight, 0);
		assertThat(this.limiter.inFlight()).isZero();
	}

}
