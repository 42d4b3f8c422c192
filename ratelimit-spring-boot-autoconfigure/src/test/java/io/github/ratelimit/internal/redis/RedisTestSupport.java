package io.github.ratelimit.internal.redis;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import org.testcontainers.DockerClientFactory;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * What {@link RedisTestServer} and {@link RedisTestCluster} share: finding executables and
 * free loopback ports, a minimal RESP client for readiness checks, one set of Lettuce
 * client resources, and cleanup of every server at JVM exit (and of servers orphaned by a
 * JVM that was killed before it could clean up).
 */

final class RedisTestSupport {

	/** System property choosing how servers run: {@code auto} (default), {@code docker} or {@code process}. */
	static final String MODE_PROPERTY = "ratelimit.test.redis";

	static final String LOOPBACK = "127.0.0.1";

	private static final String TEMP_PREFIX = "ratelimit-redis-";

	private static final Pattern OWNED_DIR = Pattern.compile(Pattern.quote(TEMP_PREFIX) + "(\\d{1,18})-.*");

	private static final List<Path> SEARCH_PATH = List.of(Path.of("/usr/bin"), Path.of("/usr/local/bin"),
			Path.of("/opt/homebrew/bin"));

	private static final int MAX_REPLY_LINE = 1024 * 1024;

	/** Ports handed out in this JVM, so two servers started close together never get the same one. */
	private static final Pattern SCRIPT_CALLS = Pattern.compile("^calls=(\\d+)");

	private static final Set<Integer> issuedPorts = ConcurrentHashMap.newKeySet();

	/** Servers to close at JVM exit, in start order. */
	private static final Set<AutoCloseable> open = Collections.synchronizedSet(new LinkedHashSet<>());

	private static Boolean dockerAvailable;

	private static ClientResources clientResources;

	private static boolean prepared;

	private RedisTestSupport() {
	}

	/**
	 * Whether standalone servers run in Docker: {@code -Dratelimit.test.redis=docker|process}
	 * forces the choice, otherwise Docker is used when Testcontainers finds an engine.
	 */
	static synchronized boolean useDocker() {
		String mode = System.getProperty(MODE_PROPERTY, "auto").trim().toLowerCase();
		switch (mode) {
			case "docker":
				return true;
			case "process":
				return false;
			case "auto":
				break;
			default:
				throw new IllegalStateException(
						MODE_PROPERTY + " must be auto, docker or process but was '" + mode + "'");
		}
		if (dockerAvailable == null) {
			try {
				dockerAvailable = DockerClientFactory.instance().isDockerAvailable();
			}
			catch (Throwable ex) {
				dockerAvailable = false;
			}
		}
		return dockerAvailable;
	}

	/**
	 * Finds a Redis executable on the {@code PATH} or in the usual install directories.
	 * @param name {@code redis-server} or {@code redis-cli}
	 * @param purpose what it is needed for, for the error message
	 * @return the executable
	 * @throws IllegalStateException naming how to install it when it is missing
	 */
	static Path executable(String name, String purpose) {
		List<Path> candidates = new ArrayList<>();
		String path = System.getenv("PATH");
		if (path != null) {
			for (String dir : path.split(java.io.File.pathSeparator)) {
				if (!dir.isBlank()) {
					candidates.add(Path.of(dir));
				}
			}
		}
		candidates.addAll(SEARCH_PATH);
		for (Path dir : candidates) {
			Path candidate = dir.resolve(name);
			if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
				return candidate;
			}
		}
		boolean cli = name.equals("redis-cli");
		throw new IllegalStateException(name + " is needed " + purpose + " but was not found on the PATH or in "
				+ SEARCH_PATH + ". Install Redis 7 (Debian/Ubuntu: 'apt-get install " + (cli ? "redis-tools" : "redis-server")
				+ "', macOS: 'brew install redis')" + (cli ? "" : " or start a Docker engine") + ".");
	}

	/**
	 * Returns a loopback port that was free a moment ago and has not been handed out before
	 * in this JVM. Someone else can still take it before Redis binds it, so starters retry.
	 */
	static int freePort() {
		for (int attempt = 0; attempt < 50; attempt++) {
			try (ServerSocket socket = new ServerSocket()) {
				socket.setReuseAddress(false);
				socket.bind(new InetSocketAddress(InetAddress.getByName(LOOPBACK), 0), 1);
				int port = socket.getLocalPort();
				if (issuedPorts.add(port)) {
					return port;
				}
			}
			catch (BindException ex) {
				// a clash with another process: try again
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not look for a free loopback port", ex);
			}
		}
		throw new IllegalStateException("No free loopback port after 50 attempts");
	}

	/**
	 * Creates a temporary directory whose name carries this JVM's pid, so a later JVM can
	 * tell that it was orphaned.
	 */
	static Path createTempDir() {
		try {
			return Files.createTempDirectory(TEMP_PREFIX + ProcessHandle.current().pid() + "-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not create a temporary directory for Redis", ex);
		}
	}

	static void deleteRecursively(Path dir) {
		if (dir == null || !Files.exists(dir)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(dir)) {
			paths.sorted(Collections.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException | UncheckedIOException ex) {
			// best effort: the OS cleans its temporary directory eventually
		}
	}

	/**
	 * Returns the last lines of a log file, or a note saying why there are none.
	 */
	static String tail(Path log, int lines) {
		try {
			if (!Files.exists(log)) {
				return "(no log at " + log + ")";
			}
			Deque<String> last = new ArrayDeque<>();
			try (Stream<String> all = Files.lines(log, StandardCharsets.UTF_8)) {
				all.forEach((line) -> {
					last.addLast(line);
					if (last.size() > lines) {
						last.removeFirst();
					}
				});
			}
			return last.isEmpty() ? "(empty log at " + log + ")" : String.join(System.lineSeparator(), last);
		}
		catch (IOException | UncheckedIOException ex) {
			return "(could not read " + log + ": " + ex.getMessage() + ")";
		}
	}

	/**
	 * Sends one command over a fresh connection and returns the reply: a {@link String} for
	 * simple and bulk strings, a {@link Long} for integers, a {@link List} for arrays.
	 * @throws IOException when Redis cannot be reached or answers with an error
	 */
	static Object command(String host, int port, Duration timeout, String... args) throws IOException {
		int millis = (int) Math.max(1, timeout.toMillis());
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), millis);
			socket.setSoTimeout(millis);
			OutputStream out = new BufferedOutputStream(socket.getOutputStream());
			out.write(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
			for (String arg : args) {
				byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
				out.write(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
				out.write(bytes);
				out.write("\r\n".getBytes(StandardCharsets.UTF_8));
			}
			out.flush();
			return readReply(new BufferedInputStream(socket.getInputStream()));
		}
	}

	/**
	 * Whether Redis answers PING with PONG within the timeout.
	 */
	static boolean pong(String host, int port, Duration timeout) {
		try {
			return "PONG".equals(command(host, port, timeout, "PING"));
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * Reads {@code field:value} lines of an INFO-style reply ({@code INFO}, {@code CLUSTER INFO}).
	 */
	static String field(Object infoReply, String field) {
		if (infoReply instanceof String text) {
			for (String line : text.split("\r?\n")) {
				if (line.startsWith(field + ":")) {
					return line.substring(field.length() + 1).trim();
				}
			}
		}
		return null;
	}

	/**
	 * Scripts a server has run so far, from {@code INFO commandstats}: its {@code EVAL},
	 * {@code EVALSHA} and {@code FCALL} calls, however the store sends its script.
	 */
	static long scriptCalls(RedisTestServer server) throws IOException {
		Object stats = command(server.host(), server.port(), RedisTestServer.COMMAND_TIMEOUT, "INFO", "commandstats");
		long calls = 0;
		for (String command : List.of("cmdstat_eval", "cmdstat_evalsha", "cmdstat_fcall")) {
			String field = field(stats, command);
			if (field != null) {
				Matcher matcher = SCRIPT_CALLS.matcher(field);
				if (!matcher.find()) {
					throw new IllegalStateException("No calls in " + field);
				}
				calls += Long.parseLong(matcher.group(1));
			}
		}
		return calls;
	}

	private static Object readReply(InputStream in) throws IOException {
		int type = in.read();
		if (type == -1) {
			throw new EOFException("Redis closed the connection");
		}
		String line = readLine(in);
		switch (type) {
			case '+':
				return line;
			case '-':
				throw new IOException("Redis answered with an error: " + line);
			case ':':
				return Long.parseLong(line);
			case '$': {
				int length = Integer.parseInt(line);
				if (length < 0) {
					return null;
				}
				byte[] bytes = in.readNBytes(length);
				if (bytes.length < length) {
					throw new EOFException("Redis closed the connection in a reply");
				}
				readLine(in);
				return new String(bytes, StandardCharsets.UTF_8);
			}
			case '*': {
				int count = Integer.parseInt(line);
				if (count < 0) {
					return null;
				}
				List<Object> items = new ArrayList<>(count);
				for (int i = 0; i < count; i++) {
					items.add(readReply(in));
				}
				return items;
			}
			default:
				throw new IOException("Unexpected RESP reply type '" + (char) type + "'");
		}
	}

	private static String readLine(InputStream in) throws IOException {
		ByteArrayOutputStream line = new ByteArrayOutputStream();
		int previous = -1;
		for (int i = 0; i < MAX_REPLY_LINE; i++) {
			int next = in.read();
			if (next == -1) {
				throw new EOFException("Redis closed the connection in a reply");
			}
			if (previous == '\r' && next == '\n') {
				byte[] bytes = line.toByteArray();
				return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
			}
			line.write(next);
			previous = next;
		}
		throw new IOException("RESP line longer than " + MAX_REPLY_LINE + " bytes");
	}

	/**
	 * Lettuce resources shared by every connection factory the harness builds. They
	 * reconnect within 500ms of a server coming back (Lettuce's default backs off to 30s,
	 * too slow for kill-and-restart tests).
	 */
	static synchronized ClientResources clientResources() {
		if (clientResources == null) {
			ClientResources resources = ClientResources.builder()
				.ioThreadPoolSize(2)
				.computationThreadPoolSize(2)
				.reconnectDelay(Delay.exponential(Duration.ofMillis(10), Duration.ofMillis(500), 2,
						TimeUnit.MILLISECONDS))
				.build();
			clientResources = resources;
			Runtime.getRuntime()
				.addShutdownHook(new Thread(() -> resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(3000),
						"redis-test-client-resources"));
		}
		return clientResources;
	}

	/**
	 * Remembers a server to close at JVM exit if no one closes it first.
	 */
	static synchronized void closeAtExit(AutoCloseable server) {
		prepare();
		open.add(server);
	}

	/**
	 * Once per JVM, before the first server starts: kills servers orphaned by earlier JVMs
	 * and installs the hook that closes ours at exit.
	 */
	static synchronized void prepare() {
		if (!prepared) {
			prepared = true;
			reapOrphans();
			Runtime.getRuntime().addShutdownHook(new Thread(RedisTestSupport::closeAll, "redis-test-cleanup"));
		}
	}

	/** Destroys connection factories, ignoring those already destroyed or failing, and forgets them. */
	static void destroyAll(List<LettuceConnectionFactory> factories) {
		for (LettuceConnectionFactory factory : factories) {
			try {
				factory.destroy();
			}
			catch (RuntimeException ex) {
				// already destroyed or failing: the server goes anyway
			}
		}
		factories.clear();
	}

	static void closed(AutoCloseable server) {
		open.remove(server);
	}

	private static void closeAll() {
		List<AutoCloseable> servers;
		synchronized (open) {
			servers = new ArrayList<>(open);
		}
		Collections.reverse(servers);
		for (AutoCloseable server : servers) {
			try {
				server.close();
			}
			catch (Throwable ex) {
				// keep closing the others
			}
		}
	}

	/**
	 * Kills processes ({@code redis-server} and its forks) that run in one of our temporary
	 * directories whose owning JVM is gone (a fork killed by a timeout never runs its shutdown hooks),
	 * and deletes those directories. Linux only, best effort: elsewhere it does nothing.
	 */
	private static void reapOrphans() {
		Path tmp;
		try {
			tmp = Path.of(System.getProperty("java.io.tmpdir")).toRealPath();
		}
		catch (IOException ex) {
			return;
		}
		if (!Files.isDirectory(Path.of("/proc/self"))) {
			return;
		}
		// by working directory, not by name: Debian's redis-server is a link to redis-check-rdb
		ProcessHandle.allProcesses().forEach((process) -> {
			try {
				Path cwd = Files.readSymbolicLink(Path.of("/proc", Long.toString(process.pid()), "cwd"));
				if (cwd.startsWith(tmp) && !cwd.equals(tmp) && isOrphaned(tmp.relativize(cwd).getName(0))) {
					process.destroyForcibly();
				}
			}
			catch (IOException | RuntimeException ex) {
				// not ours to judge (another user's process, or it just exited)
			}
		});
		try (Stream<Path> dirs = Files.list(tmp)) {
			dirs.filter((dir) -> isOrphaned(dir.getFileName())).forEach(RedisTestSupport::deleteRecursively);
		}
		catch (IOException | UncheckedIOException ex) {
			// best effort
		}
	}

	private static boolean isOrphaned(Path dirName) {
		Matcher matcher = OWNED_DIR.matcher(dirName.toString());
		return matcher.matches() && ProcessHandle.of(Long.parseLong(matcher.group(1))).isEmpty();
	}

}
