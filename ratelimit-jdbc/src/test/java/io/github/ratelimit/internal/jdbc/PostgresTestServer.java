package io.github.ratelimit.internal.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * A real PostgreSQL for tests on a free loopback port, with durability off (a test
 * database loses nothing worth keeping). It runs in a {@code postgres:15-alpine}
 * container when Testcontainers finds a Docker engine, otherwise as a {@code postgres}
 * process the test starts in a temporary data directory of its own; set
 * {@code -Dratelimit.test.postgres=process} or {@code docker} to choose.
 * <p>
 * For the process, the binaries are found on the {@code PATH} or under
 * {@code /usr/lib/postgresql/<version>/bin}, the newest version first; PostgreSQL refuses
 * to run as root, so as root every command runs as the user {@code postgres}. The
 * container's port is bound to a fixed port on the Docker host's loopback so that
 * {@link #stop()} and {@link #start()} keep it; a remote Docker host is therefore not
 * supported (use {@code -Dratelimit.test.postgres=process}).
 * <p>
 * Most tests use {@link #shared()}, which lives for the whole JVM. A test that stops the
 * database takes its own with {@link #create()} and closes it.
 */
public final class PostgresTestServer implements AutoCloseable {

	/** The database user, trusted from loopback without a password. */
	public static final String USER = "postgres";

	private static final String LOOPBACK = "127.0.0.1";

	private static final long COMMAND_TIMEOUT_SECONDS = 60;

	private static final int START_ATTEMPTS = 3;

	private static final int DEFAULT_POOL_SIZE = 16;

	private static PostgresTestServer shared;

	/** The container, or null when the server runs as a process. */
	private final PostgresContainer container;

	/** The process's binaries, directory and data directory, or null in a container. */
	private final Path bin;

	private final Path dir;

	private final Path data;

	private final boolean isShared;

	private final List<HikariDataSource> dataSources = new CopyOnWriteArrayList<>();

	private int port;

	private boolean running;

	private HikariDataSource dataSource;

	private PostgresTestServer(boolean isShared) {
		this.isShared = isShared;
		if (PostgresContainer.useDocker()) {
			this.container = PostgresContainer.start(LOOPBACK, PostgresTestServer::freePort, START_ATTEMPTS);
			this.port = this.container.port();
			this.running = true;
			this.bin = null;
			this.dir = null;
			this.data = null;
			return;
		}
		this.container = null;
		this.bin = binaries();
		this.dir = createDirectory();
		this.data = this.dir.resolve("data");
		try {
			run(List.of(this.bin.resolve("initdb").toString(), "-D", this.data.toString(), "-U", USER,
					"--auth=trust", "-E", "UTF8", "--no-sync"));
			launch();
		}
		catch (RuntimeException ex) {
			deleteDirectory();
			throw ex;
		}
	}

	/**
	 * Returns the server shared by every test in this JVM, starting it on first use. It
	 * stops at JVM exit and cannot be stopped or closed by a test.
	 * @return the shared server
	 */
	public static synchronized PostgresTestServer shared() {
		if (shared == null) {
			PostgresTestServer server = new PostgresTestServer(true);
			Runtime.getRuntime().addShutdownHook(new Thread(server::shutDown, "postgres-test-server-stop"));
			shared = server;
		}
		return shared;
	}

	/**
	 * Starts a server of the caller's own, which it may stop and start again. Close it
	 * when done.
	 * @return a running server
	 */
	public static PostgresTestServer create() {
		return new PostgresTestServer(false);
	}

	/**
	 * Returns the port it listens on, the same after {@link #stop()} and {@link #start()}.
	 * @return the port
	 */
	public int port() {
		return this.port;
	}

	/**
	 * Returns the JDBC URL of its {@code postgres} database.
	 * @return {@code jdbc:postgresql://127.0.0.1:<port>/postgres}
	 */
	public String jdbcUrl() {
		return "jdbc:postgresql://" + LOOPBACK + ":" + this.port + "/postgres";
	}

	/**
	 * Returns this server's own pool of connections (16 at most), created on first use
	 * and closed with the server.
	 * @return the pool
	 */
	public synchronized DataSource dataSource() {
		if (this.dataSource == null) {
			this.dataSource = newDataSource(DEFAULT_POOL_SIZE);
		}
		return this.dataSource;
	}

	/**
	 * Creates a new pool of connections, as another application instance would have. It
	 * waits at most a second for a connection, so that an outage shows quickly, and is
	 * closed with the server.
	 * @param maxPoolSize most connections it holds
	 * @return the pool
	 */
	public HikariDataSource newDataSource(int maxPoolSize) {
		return newDataSource(maxPoolSize, Duration.ofSeconds(1));
	}

	/**
	 * Creates a new pool of connections as {@link #newDataSource(int)} does, waiting up to
	 * {@code connectionTimeout} for a connection: for tests that hold every connection at
	 * once on purpose, where a loaded machine makes each caller wait its turn longer.
	 * @param maxPoolSize most connections it holds
	 * @param connectionTimeout the longest wait for a connection
	 * @return the pool
	 */
	public HikariDataSource newDataSource(int maxPoolSize, Duration connectionTimeout) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(jdbcUrl());
		config.setUsername(USER);
		config.setMaximumPoolSize(maxPoolSize);
		config.setConnectionTimeout(connectionTimeout.toMillis());
		config.setValidationTimeout(250);
		config.setPoolName("postgres-test-" + this.port + "-" + this.dataSources.size());
		HikariDataSource pool = new HikariDataSource(config);
		this.dataSources.add(pool);
		return pool;
	}

	/**
	 * Whether the server runs.
	 * @return false after {@link #stop()} until {@link #start()}
	 */
	public synchronized boolean isRunning() {
		return this.running;
	}

	/**
	 * Stops the server ({@code pg_ctl stop -m fast}, or {@code docker stop}, which the image
	 * turns into the same fast shutdown): open connections are closed, new ones refused
	 * until {@link #start()}. Its data stays.
	 */
	public synchronized void stop() {
		assertOwned("stop");
		pgStop();
	}

	/**
	 * Starts a stopped server again, on the same data and port, and waits until it
	 * accepts connections.
	 */
	public synchronized void start() {
		assertOwned("start");
		if (!this.running) {
			pgStart();
		}
	}

	/**
	 * Stops the server, closes the pools created here and deletes the data. Does nothing
	 * on the shared server, which stops at JVM exit.
	 */
	@Override
	public void close() {
		if (!this.isShared) {
			shutDown();
		}
	}

	private synchronized void shutDown() {
		this.dataSources.forEach(HikariDataSource::close);
		if (this.container != null) {
			this.container.close();
			this.running = false;
			return;
		}
		try {
			pgStop();
		}
		finally {
			deleteDirectory();
		}
	}

	private void launch() {
		IllegalStateException last = null;
		for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
			this.port = freePort();
			try {
				pgStart();
				return;
			}
			catch (IllegalStateException ex) {
				// another process may have taken the port between the check and the bind
				last = ex;
			}
		}
		throw last;
	}

	private void pgStart() {
		if (this.container != null) {
			this.container.start();
			this.running = true;
			return;
		}
		String options = "-p " + this.port + " -k " + this.dir + " -c listen_addresses=" + LOOPBACK
				+ " -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200";
		run(List.of(this.bin.resolve("pg_ctl").toString(), "-D", this.data.toString(), "-l",
				this.dir.resolve("postgres.log").toString(), "-o", options, "-w", "-t", "30", "start"));
		this.running = true;
	}

	private void pgStop() {
		if (this.running && this.container != null) {
			this.container.stop();
			this.running = false;
		}
		else if (this.running) {
			run(List.of(this.bin.resolve("pg_ctl").toString(), "-D", this.data.toString(), "-m", "fast", "-w", "-t",
					"30", "stop"));
			this.running = false;
		}
	}

	private void assertOwned(String action) {
		if (this.isShared) {
			throw new IllegalStateException("The shared PostgreSQL server cannot " + action
					+ ": other tests use it. Use PostgresTestServer.create() for a server of your own");
		}
	}

	/** Runs a command (as {@code postgres} when we are root) and fails with its output. */
	private String run(List<String> command) {
		List<String> full = new ArrayList<>();
		if (isRoot()) {
			full.addAll(List.of("runuser", "-u", USER, "--"));
		}
		full.addAll(command);
		try {
			Process process = new ProcessBuilder(full).redirectErrorStream(true).start();
			// pg_ctl leaves the server running with our output pipe unless -l redirects it
			byte[] output = process.getInputStream().readAllBytes();
			if (!process.waitFor(COMMAND_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				throw new IllegalStateException(full + " did not finish within " + COMMAND_TIMEOUT_SECONDS + "s");
			}
			String text = new String(output, StandardCharsets.UTF_8);
			if (process.exitValue() != 0) {
				throw new IllegalStateException(full + " exited with " + process.exitValue() + ":"
						+ System.lineSeparator() + text + logTail());
			}
			return text;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not run " + full, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while running " + full, ex);
		}
	}

	private String logTail() {
		Path log = this.dir.resolve("postgres.log");
		try {
			if (!Files.exists(log)) {
				return "";
			}
			List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
			return System.lineSeparator() + "Server log tail:" + System.lineSeparator()
					+ String.join(System.lineSeparator(), lines.subList(Math.max(0, lines.size() - 20), lines.size()));
		}
		catch (IOException ex) {
			return "";
		}
	}

	private Path createDirectory() {
		if (isRoot()) {
			// the server's files must belong to the user it runs as
			return Paths.get(run(List.of("mktemp", "-d", "-t", "ratelimit-postgres-XXXXXX")).strip());
		}
		try {
			return Files.createTempDirectory("ratelimit-postgres-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not create a temporary directory", ex);
		}
	}

	private void deleteDirectory() {
		if (!Files.exists(this.dir)) {
			return;
		}
		try (Stream<Path> files = Files.walk(this.dir)) {
			files.sorted(Comparator.reverseOrder()).forEach((file) -> file.toFile().delete());
		}
		catch (IOException ex) {
			// a temporary directory left behind harms nothing
		}
	}

	private static boolean isRoot() {
		return "root".equals(System.getProperty("user.name"));
	}

	/** The directory holding {@code initdb} and {@code pg_ctl}: the PATH's, else the newest installed. */
	private static Path binaries() {
		String path = System.getenv("PATH");
		if (path != null) {
			for (String entry : path.split(java.io.File.pathSeparator)) {
				Path pgCtl = Paths.get(entry, "pg_ctl");
				if (Files.isExecutable(pgCtl)) {
					try {
						// Debian links pg_ctl onto the PATH; initdb lives beside the real one
						return pgCtl.toRealPath().getParent();
					}
					catch (IOException ex) {
						return pgCtl.getParent();
					}
				}
			}
		}
		Path installed = Paths.get("/usr/lib/postgresql");
		if (Files.isDirectory(installed)) {
			try (Stream<Path> versions = Files.list(installed)) {
				Path newest = versions.filter((version) -> Files.isExecutable(version.resolve("bin/pg_ctl")))
					.max(Comparator.comparing(PostgresTestServer::versionNumber))
					.orElse(null);
				if (newest != null) {
					return newest.resolve("bin");
				}
			}
			catch (IOException ex) {
				// reported below
			}
		}
		throw new IllegalStateException("PostgreSQL is needed to run these tests: install it (Debian: apt-get "
				+ "install postgresql) so that pg_ctl is on the PATH or under /usr/lib/postgresql/<version>/bin");
	}

	private static int versionNumber(Path version) {
		try {
			return Integer.parseInt(version.getFileName().toString().replaceAll("\\..*", ""));
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
			socket.setReuseAddress(true);
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("No free loopback port", ex);
		}
	}

	@Override
	public String toString() {
		return "PostgresTestServer[" + jdbcUrl() + (this.isShared ? ", shared" : "") + "]";
	}

}
