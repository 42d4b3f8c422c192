package io.github.ratelimit.internal.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.function.IntSupplier;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * The Docker side of {@link PostgresTestServer}: a {@code postgres:15-alpine} container
 * whose port is bound to a fixed port on the Docker host's loopback, so that a container
 * stopped and started again is found at the same JDBC URL.
 */
final class PostgresContainer {

	/** System property choosing how servers run: {@code auto} (default), {@code docker} or {@code process}. */
	static final String MODE_PROPERTY = "ratelimit.test.postgres";

	private static final String IMAGE = "postgres:15-alpine";

	private static final int POSTGRES_PORT = 5432;

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(60);

	private static final int STOP_TIMEOUT_SECONDS = 10;

	private static Boolean dockerAvailable;

	private final String host;

	private final int port;

	private final GenericContainer<?> container;

	private PostgresContainer(String host, int port) {
		this.host = host;
		this.port = port;
		this.container = new GenericContainer<>(DockerImageName.parse(IMAGE))
			.withEnv("POSTGRES_HOST_AUTH_METHOD", "trust")
			.withEnv("POSTGRES_USER", PostgresTestServer.USER)
			.withExposedPorts(POSTGRES_PORT)
			// the settings of the process path: durability off, room for many pools
			.withCommand("postgres", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
					"-c", "max_connections=200")
			.withCreateContainerCmdModifier((create) -> create.getHostConfig()
				.withPortBindings(new PortBinding(Ports.Binding.bindIpAndPort(host, port),
						ExposedPort.tcp(POSTGRES_PORT))))
			// the image starts a temporary server to initialise the database, then the real one
			.waitingFor(Wait.forLogMessage(".*database system is ready to accept connections.*\\s", 2)
				.withStartupTimeout(STARTUP_TIMEOUT));
	}

	/**
	 * Whether servers run in Docker: {@code -Dratelimit.test.postgres=docker|process}
	 * forces the choice, otherwise Docker is used when Testcontainers finds an engine
	 * (without one it answers false at once).
	 */
	static synchronized boolean useDocker() {
		String mode = System.getProperty(MODE_PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
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
	 * Starts a container on a free port of {@code host}, trying other ports when another
	 * process takes the chosen one first, and waits until it accepts connections.
	 * @param host the loopback address to bind
	 * @param freePort picks a port that is free now
	 * @param attempts how many ports to try
	 * @return the running container
	 */
	static PostgresContainer start(String host, IntSupplier freePort, int attempts) {
		RuntimeException failure = null;
		for (int attempt = 0; attempt < attempts; attempt++) {
			PostgresContainer postgres = new PostgresContainer(host, freePort.getAsInt());
			try {
				postgres.container.start();
				postgres.awaitConnection();
				return postgres;
			}
			catch (RuntimeException ex) {
				// another process may have taken the port between the check and the bind; the
				// first failure says most (Testcontainers answers later ones with "will not retry")
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
				postgres.close();
			}
		}
		throw failure;
	}

	int port() {
		return this.port;
	}

	/** Stops the container (the image's stop signal is a fast shutdown); it keeps its data. */
	void stop() {
		this.container.getDockerClient()
			.stopContainerCmd(this.container.getContainerId())
			.withTimeout(STOP_TIMEOUT_SECONDS)
			.exec();
	}

	/** Starts the stopped container again, on the same host port, and waits until it accepts connections. */
	void start() {
		this.container.getDockerClient().startContainerCmd(this.container.getContainerId()).exec();
		awaitConnection();
	}

	/** Stops and removes the container. */
	void close() {
		try {
			this.container.stop();
		}
		catch (RuntimeException ex) {
			// already gone: Testcontainers' reaper removes what is left at JVM exit
		}
	}

	/**
	 * Waits until PostgreSQL answers through the bound port: after a restart there is no
	 * log wait, and Docker's proxy accepts connections before the server inside listens.
	 */
	private void awaitConnection() {
		String url = "jdbc:postgresql://" + this.host + ":" + this.port + "/postgres?connectTimeout=1";
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		SQLException last = null;
		while (System.nanoTime() - deadline < 0) {
			try (Connection connection = DriverManager.getConnection(url, PostgresTestServer.USER, "")) {
				if (connection.isValid(1)) {
					return;
				}
			}
			catch (SQLException ex) {
				last = ex;
			}
			pause();
		}
		throw new IllegalStateException("PostgreSQL in container " + this.container.getContainerId()
				+ " did not accept connections on " + this.host + ":" + this.port + " within "
				+ STARTUP_TIMEOUT.toSeconds() + "s (" + last + "). Its log:" + System.lineSeparator()
				+ this.container.getLogs());
	}

	private static void pause() {
		try {
			Thread.sleep(50);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for PostgreSQL", ex);
		}
	}

	@Override
	public String toString() {
		return "PostgresContainer[" + IMAGE + ", " + this.host + ":" + this.port + "]";
	}

}
