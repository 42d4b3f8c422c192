package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * One {@code redis-server} process on a loopback port, in its own directory, logging to
 * {@code redis.log} there. It can be killed and started again on the same port.
 */
final class RedisProcess {

	static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(10);

	private static final int START_ATTEMPTS = 5;

	private static final Duration POLL_INTERVAL = Duration.ofMillis(20);

	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

	private static final int LOG_TAIL_LINES = 30;

	private final Path dir;

	private final Path log;

	private final int port;

	private final List<String> command;

	private Process process;

	private RedisProcess(Path executable, Path dir, Path configFile, int port, List<String> extraArgs) {
		this.dir = dir;
		this.log = dir.resolve("redis.log");
		this.port = port;
		List<String> command = new ArrayList<>(List.of(executable.toString()));
		if (configFile != null) {
			// a config file must come first; the options after it override it
			command.add(configFile.toString());
		}
		command.addAll(List.of("--port", Integer.toString(port), "--bind", RedisTestSupport.LOOPBACK, "--save", "",
				"--appendonly", "no", "--protected-mode", "yes", "--dir", dir.toString(),
				// DEBUG SLEEP from loopback: tests stall Redis as a slow command or a fork would
				"--enable-debug-command", "local"));
		command.addAll(extraArgs);
		this.command = List.copyOf(command);
	}

	/**
	 * Starts {@code redis-server} on a free loopback port and waits until it answers. When
	 * another process takes the port between the check and the bind, it tries another one.
	 * @param executable the {@code redis-server} binary
	 * @param dir its working directory, created if missing
	 * @param extraArgs supplies further arguments for each attempt (a cluster bus port, say)
	 * @return the running process
	 */
	static RedisProcess start(Path executable, Path dir, Supplier<List<String>> extraArgs) {
		return start(executable, dir, null, extraArgs);
	}

	/**
	 * Starts {@code redis-server} with a config file, which Sentinel needs (it rewrites
	 * it), on a free loopback port, and waits until it answers.
	 * @param executable the {@code redis-server} binary
	 * @param dir its working directory, created if missing
	 * @param configFile a writable config file, or {@code null} for none
	 * @param extraArgs supplies further arguments for each attempt ({@code --sentinel}, say)
	 * @return the running process
	 */
	static RedisProcess start(Path executable, Path dir, Path configFile, Supplier<List<String>> extraArgs) {
		try {
			Files.createDirectories(dir);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not create " + dir, ex);
		}
		PortTakenException last = null;
		for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
			RedisProcess redis = new RedisProcess(executable, dir, configFile, RedisTestSupport.freePort(),
					extraArgs.get());
			try {
				redis.launch();
				return redis;
			}
			catch (PortTakenException ex) {
				last = ex;
			}
		}
		throw new IllegalStateException("Could not start redis-server: its port was taken " + START_ATTEMPTS
				+ " times in a row", last);
	}

	int port() {
		return this.port;
	}

	Path dir() {
		return this.dir;
	}

	synchronized boolean isAlive() {
		return this.process != null && this.process.isAlive();
	}

	/**
	 * Kills the process with SIGKILL and waits until it is gone.
	 */
	synchronized void kill() {
		if (this.process != null) {
			List<ProcessHandle> children = children();
			this.process.destroyForcibly();
			awaitExit(this.process);
			endAll(children);
		}
	}

	/**
	 * Sends SIGTERM without waiting, so that several servers stop in parallel.
	 */
	synchronized void requestStop() {
		if (this.process != null && this.process.isAlive()) {
			this.process.destroy();
		}
	}

	/**
	 * Stops the process with SIGTERM, falling back to SIGKILL after five seconds.
	 */
	synchronized void stop() {
		if (this.process != null && this.process.isAlive()) {
			List<ProcessHandle> children = children();
			this.process.destroy();
			try {
				if (!this.process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
					this.process.destroyForcibly();
					awaitExit(this.process);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				this.process.destroyForcibly();
			}
			endAll(children);
		}
	}

	/**
	 * Returns the processes Redis forked (to sync a replica, say), which outlive a killed
	 * parent.
	 */
	synchronized List<ProcessHandle> children() {
		return (this.process != null) ? this.process.descendants().toList() : List.of();
	}

	/**
	 * Kills processes left over by a stopped Redis and waits (at most a second) for them
	 * to go.
	 */
	static void endAll(List<ProcessHandle> processes) {
		processes.forEach(ProcessHandle::destroyForcibly);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
		for (ProcessHandle process : processes) {
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0) {
				return;
			}
			try {
				process.onExit().get(remaining, TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			catch (ExecutionException | TimeoutException ex) {
				// gone or not ours to wait for: nothing more to do
			}
		}
	}

	/**
	 * Starts the server again on the same port (stopping it first if it runs) and waits
	 * until it answers. A cluster node finds its identity again in {@code nodes.conf}.
	 */
	synchronized void restart() {
		stop();
		PortTakenException last = null;
		for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
			try {
				launch();
				return;
			}
			catch (PortTakenException ex) {
				last = ex;
				sleep(Duration.ofMillis(200));
			}
		}
		throw new IllegalStateException("Could not restart redis-server: another process holds 127.0.0.1:"
				+ this.port, last);
	}

	String logTail() {
		return RedisTestSupport.tail(this.log, LOG_TAIL_LINES);
	}

	private void launch() {
		long logOffset = size(this.log);
		try {
			this.process = new ProcessBuilder(this.command).directory(this.dir.toFile())
				.redirectErrorStream(true)
				.redirectOutput(Redirect.appendTo(this.log.toFile()))
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not run " + this.command, ex);
		}
		String pid = Long.toString(this.process.pid());
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		while (true) {
			if (pid.equals(processIdOnPort())) {
				return;
			}
			if (!this.process.isAlive()) {
				if (readFrom(this.log, logOffset).contains("Address already in use")) {
					throw new PortTakenException(this.port);
				}
				throw new IllegalStateException("redis-server on 127.0.0.1:" + this.port + " exited with code "
						+ this.process.exitValue() + " before answering. Log tail (" + this.log + "):"
						+ System.lineSeparator() + logTail());
			}
			if (System.nanoTime() - deadline > 0) {
				this.process.destroyForcibly();
				awaitExit(this.process);
				throw new IllegalStateException("redis-server on 127.0.0.1:" + this.port + " did not answer within "
						+ STARTUP_TIMEOUT.toSeconds() + "s. Log tail (" + this.log + "):" + System.lineSeparator()
						+ logTail());
			}
			sleep(POLL_INTERVAL);
		}
	}

	/**
	 * Returns the pid of the Redis answering on our port: it must be ours, not a stranger
	 * that took the port first.
	 */
	private String processIdOnPort() {
		try {
			Object info = RedisTestSupport.command(RedisTestSupport.LOOPBACK, this.port, Duration.ofMillis(250),
					"INFO", "server");
			return RedisTestSupport.field(info, "process_id");
		}
		catch (IOException ex) {
			return null;
		}
	}

	private static void awaitExit(Process process) {
		try {
			process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static long size(Path file) {
		try {
			return Files.exists(file) ? Files.size(file) : 0;
		}
		catch (IOException ex) {
			return 0;
		}
	}

	private static String readFrom(Path file, long offset) {
		try (InputStream in = Files.newInputStream(file)) {
			in.skipNBytes(offset);
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			return "";
		}
	}

	static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for Redis", ex);
		}
	}

	/**
	 * Thrown when the port was taken between choosing it and Redis binding it.
	 */
	private static final class PortTakenException extends RuntimeException {

		PortTakenException(int port) {
			super("127.0.0.1:" + port + " is already in use");
		}

	}

}
