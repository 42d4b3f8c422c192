package io.github.ratelimit.compat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * One {@code redis-server} process for the suites of this JVM, on a free loopback port,
 * without persistence, stopped when the JVM exits. {@code redis-server} must be on the
 * {@code PATH} (Debian: {@code apt-get install redis-server}).
 */
final class RedisServerProcess {

	private static final long START_DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(10);

	private static RedisServerProcess shared;

	private final Process process;

	private final int port;

	private RedisServerProcess(Process process, int port) {
		this.process = process;
		this.port = port;
	}

	/**
	 * Registers {@code spring.data.redis.host} and {@code spring.data.redis.port} of the
	 * shared server, starting it on first use.
	 * @param registry the registry of a {@code @DynamicPropertySource} method
	 */
	static void properties(DynamicPropertyRegistry registry) {
		RedisServerProcess server = shared();
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> server.port);
	}

	private static synchronized RedisServerProcess shared() {
		if (shared == null) {
			shared = start();
		}
		return shared;
	}

	private static RedisServerProcess start() {
		try {
			int port = freePort();
			Path directory = Files.createTempDirectory("compat-redis");
			Process process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind",
					"127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory.toString())
				.redirectErrorStream(true)
				.redirectOutput(directory.resolve("redis.log").toFile())
				.start();
			RedisServerProcess server = new RedisServerProcess(process, port);
			Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
			server.awaitPong();
			return server;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("could not start redis-server; is it on the PATH?", ex);
		}
	}

	private void awaitPong() throws IOException {
		long start = System.nanoTime();
		while (true) {
			if (!this.process.isAlive()) {
				throw new IOException("redis-server exited with " + this.process.exitValue());
			}
			try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), this.port)) {
				socket.setSoTimeout(1000);
				OutputStream out = socket.getOutputStream();
				out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
				out.flush();
				InputStream in = socket.getInputStream();
				byte[] reply = in.readNBytes(5);
				if ("+PONG".equals(new String(reply, StandardCharsets.US_ASCII))) {
					return;
				}
			}
			catch (IOException notYet) {
				if (System.nanoTime() - start > START_DEADLINE_NANOS) {
					throw new IOException("redis-server did not answer on port " + this.port, notYet);
				}
				Thread.onSpinWait();
			}
		}
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

}
