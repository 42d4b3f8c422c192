package io.github.ratelimit.sample.reactive;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive sample with the limit on failed sign-ins that the login guide recommends for
 * HTTP Basic (20 401s per address per 15 minutes, before Spring Security), against a
 * guesser that hangs up on every request before its answer: hanging up gets no guess back.
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "ratelimit.routes[0].path=/**", "ratelimit.routes[0].key=ip",
				"ratelimit.routes[0].capacity=20", "ratelimit.routes[0].period=15m",
				"ratelimit.routes[0].count-statuses=401" })
@Import(PasswordGuessingTests.SlowPasswordChecks.class)
class PasswordGuessingTests {

	private static final int HUNG_UP = -1;

	@LocalServerPort
	int port;

	@Test
	void aGuesserHangingUpOnEveryRequestIsRefusedAfterTheAllowedFailures() throws InterruptedException {
		List<Integer> statuses = new ArrayList<>();
		for (int i = 0; i < 60; i++) {
			// each check takes 100 ms; the guesser resets the connection after 30
			statuses.add(getOrHangUp("/api/orders/1", basic("alice", "guess-" + i), Duration.ofMillis(30)));
		}
		SlowPasswordChecks.awaitIdle(Duration.ofSeconds(10));
		assertThat(statuses).doesNotContain(200, 401).contains(429);
		// every request Spring Security took counts, whether or not its check began before the reset
		assertThat(SlowPasswordChecks.CHECKS.get()).as("passwords checked").isBetween(1, 20);
		assertThat(getOrHangUp("/api/orders/1", basic("alice", "alice-secret"), Duration.ofSeconds(10)))
			.as("the address is refused, whatever it sends")
			.isEqualTo(429);
	}

	private int getOrHangUp(String path, String authorization, Duration patience) {
		String head = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + this.port + "\r\nAuthorization: "
				+ authorization + "\r\nConnection: close\r\n\r\n";
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.port), 5_000);
			socket.setSoTimeout((int) patience.toMillis());
			socket.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
			socket.getOutputStream().flush();
			BufferedReader reader = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
			try {
				String statusLine = reader.readLine();
				assertThat(statusLine).startsWith("HTTP/1.1 ");
				return Integer.parseInt(statusLine.substring(9, 12));
			}
			catch (SocketTimeoutException ex) {
				// a reset, not a polite close
				socket.setSoLinger(true, 0);
				return HUNG_UP;
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String basic(String user, String password) {
		return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Password checks as slow as bcrypt's, counted; like bcrypt, a check goes on when the
	 * request is cancelled.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	static class SlowPasswordChecks {

		static final AtomicInteger CHECKS = new AtomicInteger();

		static final AtomicInteger RUNNING = new AtomicInteger();

		@Bean
		PasswordEncoder passwordEncoder() {
			PasswordEncoder delegate = PasswordEncoderFactories.createDelegatingPasswordEncoder();
			return new PasswordEncoder() {

				@Override
				public String encode(CharSequence rawPassword) {
					return delegate.encode(rawPassword);
				}

				@Override
				public boolean matches(CharSequence rawPassword, String encodedPassword) {
					CHECKS.incrementAndGet();
					RUNNING.incrementAndGet();
					try {
						work(Duration.ofMillis(100));
						return delegate.matches(rawPassword, encodedPassword);
					}
					finally {
						RUNNING.decrementAndGet();
					}
				}

				@Override
				public boolean upgradeEncoding(String encodedPassword) {
					return delegate.upgradeEncoding(encodedPassword);
				}

			};
		}

		/** Takes its time whatever interrupts it, as a hash computation does. */
		private static void work(Duration duration) {
			long end = System.nanoTime() + duration.toNanos();
			boolean interrupted = false;
			for (long left = duration.toNanos(); left > 0; left = end - System.nanoTime()) {
				try {
					Thread.sleep(Math.max(1, left / 1_000_000));
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}

		static void awaitIdle(Duration timeout) throws InterruptedException {
			long end = System.nanoTime() + timeout.toNanos();
			while (RUNNING.get() > 0 && System.nanoTime() < end) {
				Thread.sleep(10);
			}
		}

	}

}
