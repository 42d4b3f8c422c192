package io.github.ratelimit.sample;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Starts the packaged sample, processed ahead of time with the {@code redis} profile, with
 * {@code -Dspring.aot.enabled=true} against a {@code redis-server} of its own on a free
 * loopback port, and checks that it limits from the generated bean definitions: a
 * {@code 429}, decided in Redis. Run by failsafe once the jar is packaged.
 */
class AotSampleApplicationTests {

	private static final String LOOPBACK = "127.0.0.1";

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(90);

	private static final Path WORK = Path.of("target", "aot-sample");

	private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private static Process redis;

	private static Process application;

	private static int redisPort;

	private static int port;

	@BeforeAll
	static void start() throws Exception {
		Files.createDirectories(WORK);
		redisPort = freePort();
		redis = new ProcessBuilder("redis-server", "--port", Integer.toString(redisPort), "--bind", LOOPBACK, "--save",
				"", "--appendonly", "no", "--dir", WORK.toAbsolutePath().toString())
			.redirectErrorStream(true)
			.redirectOutput(WORK.resolve("redis.log").toFile())
			.start();
		awaitRedis();
		port = freePort();
		String jar = System.getProperty("sample.jar", "target/sample-app.jar");
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		application = new ProcessBuilder(java, "-Dspring.aot.enabled=true", "-jar", jar, "--server.port=" + port,
				"--server.address=" + LOOPBACK, "--spring.profiles.active=redis", "--spring.data.redis.host=" + LOOPBACK,
				"--spring.data.redis.port=" + redisPort)
			.redirectErrorStream(true)
			.redirectOutput(WORK.resolve("application.log").toFile())
			.start();
		awaitApplication();
	}

	@AfterAll
	static void stop() throws InterruptedException {
		for (Process process : new Process[] { application, redis }) {
			if (process != null) {
				process.destroy();
				if (!process.waitFor(10, TimeUnit.SECONDS)) {
					process.destroyForcibly().waitFor();
				}
			}
		}
	}

	@Test
	void startsFromTheGeneratedBeanDefinitions() throws IOException {
		assertThat(log()).contains("Starting AOT-processed SampleApplication");
	}

	@Test
	void rejectsTheSixthOrderReadOfAMinuteInRedis() throws Exception {
		for (int i = 1; i <= 5; i++) {
			assertThat(get("/api/orders/" + i, null).statusCode()).as("read %d", i).isNotEqualTo(429);
		}
		HttpResponse<String> rejected = get("/api/orders/6", null);
		assertThat(rejected.statusCode()).isEqualTo(429);
		assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
		assertThat(rejected.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
		assertThat(rejected.body()).contains("https://iana.org/assignments/http-problem-types#quota-exceeded");
		// keys name the limit by its id, derived from the limit's name alone
		String ordersLimit = RateLimit.of("GET /api/orders/{id}", Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(1)).id();
		assertThat(redisKeys("sample:rl:*")).contains("sample:rl:{ip:127.0.0.1}:" + ordersLimit);
	}

	@Test
	void reportsTheRedisStoreThroughTheActuatorEndpoint() throws Exception {
		HttpResponse<String> limits = get("/actuator/ratelimits", "admin:admin-secret");
		assertThat(limits.statusCode()).isEqualTo(200);
		assertThat(limits.body()).contains("\"type\":\"redis\"").contains("\"name\":\"orders-write\"");
	}

	private static HttpResponse<String> get(String path, String credentials) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + LOOPBACK + ":" + port + path))
			.timeout(Duration.ofSeconds(10));
		if (credentials != null) {
			request.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
		}
		return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static void awaitApplication() throws Exception {
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			if (!application.isAlive()) {
				throw new IllegalStateException("The AOT-processed sample exited with " + application.exitValue()
						+ "; its log ends with:\n" + tail());
			}
			if (log().contains("Started SampleApplication")) {
				return;
			}
			Thread.sleep(200);
		}
		throw new IllegalStateException("The AOT-processed sample did not start within " + STARTUP_TIMEOUT
				+ "; its log ends with:\n" + tail());
	}

	private static void awaitRedis() throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (System.nanoTime() < deadline) {
			if (!redis.isAlive()) {
				throw new IllegalStateException("redis-server exited with " + redis.exitValue() + ": "
						+ Files.readString(WORK.resolve("redis.log")));
			}
			try {
				if ("+PONG".equals(command("PING").get(0))) {
					return;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			Thread.sleep(50);
		}
		throw new IllegalStateException("redis-server did not answer on port " + redisPort);
	}

	private static List<String> redisKeys(String pattern) throws IOException {
		List<String> reply = command("KEYS", pattern);
		// an array reply: its header, then a length line and a value line per key
		List<String> keys = new ArrayList<>();
		for (int i = 2; i < reply.size(); i += 2) {
			keys.add(reply.get(i));
		}
		return keys;
	}

	/** Sends one command in the Redis protocol and reads its reply, line by line. */
	private static List<String> command(String... arguments) throws IOException {
		try (Socket socket = new Socket(InetAddress.getByName(LOOPBACK), redisPort)) {
			socket.setSoTimeout(5_000);
			StringBuilder request = new StringBuilder("*").append(arguments.length).append("\r\n");
			for (String argument : arguments) {
				request.append('$').append(argument.getBytes(StandardCharsets.UTF_8).length).append("\r\n")
					.append(argument).append("\r\n");
			}
			OutputStream out = socket.getOutputStream();
			out.write(request.toString().getBytes(StandardCharsets.UTF_8));
			out.flush();
			socket.shutdownOutput();
			InputStream in = socket.getInputStream();
			return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
		}
	}

	private static String log() throws IOException {
		return Files.readString(WORK.resolve("application.log"));
	}

	private static String tail() throws IOException {
		List<String> lines = log().lines().toList();
		return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
			return socket.getLocalPort();
		}
	}

}
