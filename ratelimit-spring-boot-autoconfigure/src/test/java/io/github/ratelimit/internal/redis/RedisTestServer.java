package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A real standalone Redis for tests, on a loopback port. It runs in a
 * {@code redis:7.2-alpine} container when Testcontainers finds a Docker engine, otherwise
 * as a {@code redis-server} process (no persistence, its own temporary directory); set
 * {@code -Dratelimit.test.redis=process} or {@code docker} to choose.
 * <p>
 * Most tests use {@link #shared()}, which lives for the whole JVM; call {@link #flushAll()}
 * between tests. A test that kills Redis takes its own with {@link #start()} and closes it.
 * For {@code @SpringBootTest}:
 * <pre class="code">
 * &#64;DynamicPropertySource
 * static void redis(DynamicPropertyRegistry registry) {
 * 	RedisTestServer.properties(registry);
 * }
 * </pre>
 * With Docker, the container's port is bound to a fixed port on the Docker host's
 * loopback so that {@link #restart()} keeps it; a remote Docker host is therefore not
 * supported (use {@code -Dratelimit.test.redis=process}).
 */
public final class RedisTestServer implements AutoCloseable {

	/** Command timeout of the connection factories built here. */
	public static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(2);

	private static final String IMAGE = "redis:7.2-alpine";

	private static final int REDIS_PORT = 6379;

	private static RedisTestServer shared;

	private final Backend backend;

	private final boolean isShared;

	private final List<LettuceConnectionFactory> connectionFactories = new CopyOnWriteArrayList<>();

	private final AutoCloseable stopAtExit = this::stop;

	private RedisTestServer(Backend backend, boolean isShared) {
		this.backend = backend;
		this.isShared = isShared;
		RedisTestSupport.closeAtExit(this.stopAtExit);
	}

	/**
	 * Returns the server shared by every test in this JVM, starting it on first use. It
	 * stops at JVM exit and cannot be killed, restarted or closed by a test.
	 * @return the shared server
	 */
	public static synchronized RedisTestServer shared() {
		if (shared == null) {
			shared = create(true);
		}
		return shared;
	}

	/**
	 * Starts a server of the caller's own, which it may kill and restart. Close it when
	 * done; one left open is stopped at JVM exit.
	 * @return a running server
	 */
	public static RedisTestServer start() {
		return create(false);
	}

	private static RedisTestServer create(boolean isShared) {
		RedisTestSupport.prepare();
		Backend backend = RedisTestSupport.useDocker() ? new ContainerBackend() : new ProcessBackend();
		return new RedisTestServer(backend, isShared);
	}

	/**
	 * Registers {@code spring.data.redis.host} and {@code spring.data.redis.port} of the
	 * {@link #shared() shared server}, which starts when the test context is built.
	 * @param registry the registry of a {@code @DynamicPropertySource} method
	 */
	public static void properties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> shared().host());
		registry.add("spring.data.redis.port", () -> shared().port());
	}

	/**
	 * Returns the host to connect to.
	 * @return a loopback address
	 */
	public String host() {
		return RedisTestSupport.LOOPBACK;
	}

	/**
	 * Returns the port to connect to; it stays the same across {@link #restart()}.
	 * @return the port
	 */
	public int port() {
		return this.backend.port();
	}

	/**
	 * Returns the URI to connect to.
	 * @return {@code redis://127.0.0.1:<port>}
	 */
	public String redisUri() {
		return "redis://" + host() + ":" + port();
	}

	/**
	 * Whether the server is running; false after {@link #kill()} or {@link #close()}.
	 * @return whether it runs
	 */
	public boolean isRunning() {
		return this.backend.isRunning();
	}

	/**
	 * Builds a started connection factory for this server, with a
	 * {@link #COMMAND_TIMEOUT two-second command timeout} and quick reconnects. It is
	 * destroyed when this server closes; a test may destroy it sooner.
	 * @return a started factory
	 */
	public LettuceConnectionFactory connectionFactory() {
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			.clientResources(RedisTestSupport.clientResources())
			.clientOptions(ClientOptions.builder()
				.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(1)).build())
				.build())
			.commandTimeout(COMMAND_TIMEOUT)
			.shutdownQuietPeriod(Duration.ZERO)
			.shutdownTimeout(Duration.ofMillis(500))
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(host(), port()), client);
		factory.afterPropertiesSet();
		factory.start();
		this.connectionFactories.add(factory);
		return factory;
	}

	/**
	 * Deletes every key.
	 */
	public void flushAll() {
		try {
			RedisTestSupport.command(host(), port(), COMMAND_TIMEOUT, "FLUSHALL");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("FLUSHALL failed on " + redisUri(), ex);
		}
	}

	/**
	 * Kills the server abruptly (SIGKILL, or {@code docker kill}): clients see their
	 * connections drop and new ones refused until {@link #restart()}. Its data is lost.
	 */
	public void kill() {
		assertOwned("kill");
		this.backend.kill();
	}

	/**
	 * Starts the server again on the same port, stopping it first if it runs, and waits
	 * until it answers. It starts empty.
	 */
	public void restart() {
		assertOwned("restart");
		this.backend.restart();
	}

	/**
	 * Stops the server and destroys the connection factories built here. Does nothing on
	 * the shared server, which stops at JVM exit.
	 */
	@Override
	public void close() {
		if (!this.isShared) {
			stop();
		}
	}

	private void stop() {
		RedisTestSupport.destroyAll(this.connectionFactories);
		this.backend.close();
		RedisTestSupport.closed(this.stopAtExit);
	}

	private void assertOwned(String action) {
		if (this.isShared) {
			throw new IllegalStateException("The shared Redis server cannot " + action
					+ ": other tests use it. Use RedisTestServer.start() for a server of your own");
		}
	}

	@Override
	public String toString() {
		return "RedisTestServer[" + redisUri() + (this.isShared ? ", shared" : "") + "]";
	}

	private interface Backend {

		int port();

		boolean isRunning();

		void kill();

		void restart();

		void close();

	}

	/**
	 * A {@code redis-server} process in a temporary directory.
	 */
	private static final class ProcessBackend implements Backend {

		private final Path dir;

		private final RedisProcess process;

		ProcessBackend() {
			Path executable = RedisTestSupport.executable("redis-server", "to run Redis for the tests");
			this.dir = RedisTestSupport.createTempDir();
			try {
				this.process = RedisProcess.start(executable, this.dir, List::of);
			}
			catch (RuntimeException ex) {
				RedisTestSupport.deleteRecursively(this.dir);
				throw ex;
			}
		}

		@Override
		public int port() {
			return this.process.port();
		}

		@Override
		public boolean isRunning() {
			return this.process.isAlive();
		}

		@Override
		public void kill() {
			this.process.kill();
		}

		@Override
		public void restart() {
			this.process.restart();
		}

		@Override
		public void close() {
			this.process.stop();
			RedisTestSupport.deleteRecursively(this.dir);
		}

	}

	/**
	 * A {@code redis:7.2-alpine} container whose port is bound to a fixed loopback port, so
	 * a restarted container is found where the old one was.
	 */
	private static final class ContainerBackend implements Backend {

		private final int port;

		private final GenericContainer<?> container;

		ContainerBackend() {
			this.port = RedisTestSupport.freePort();
			this.container = new GenericContainer<>(DockerImageName.parse(IMAGE)).withExposedPorts(REDIS_PORT)
				// DEBUG from any client: the test's arrive through Docker's proxy, not loopback, and
				// the port is bound to the host's loopback only
				.withCommand("redis-server", "--save", "", "--appendonly", "no", "--enable-debug-command", "yes")
				.withCreateContainerCmdModifier((create) -> create.getHostConfig()
					.withPortBindings(new PortBinding(Ports.Binding.bindIpAndPort(RedisTestSupport.LOOPBACK, this.port),
							ExposedPort.tcp(REDIS_PORT))))
				.waitingFor(Wait.forLogMessage(".*Ready to accept connections.*\\n", 1)
					.withStartupTimeout(Duration.ofSeconds(60)));
			this.container.start();
			awaitPong();
		}

		@Override
		public int port() {
			return this.port;
		}

		@Override
		public boolean isRunning() {
			return this.container.getContainerId() != null
					&& Boolean.TRUE.equals(this.container.getDockerClient()
						.inspectContainerCmd(this.container.getContainerId())
						.exec()
						.getState()
						.getRunning());
		}

		@Override
		public void kill() {
			if (isRunning()) {
				this.container.getDockerClient().killContainerCmd(this.container.getContainerId()).exec();
			}
		}

		@Override
		public void restart() {
			kill();
			this.container.getDockerClient().startContainerCmd(this.container.getContainerId()).exec();
			awaitPong();
		}

		@Override
		public void close() {
			this.container.stop();
		}

		private void awaitPong() {
			long deadline = System.nanoTime() + RedisProcess.STARTUP_TIMEOUT.toNanos();
			while (!RedisTestSupport.pong(RedisTestSupport.LOOPBACK, this.port, Duration.ofMillis(250))) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException("Redis in container " + this.container.getContainerId()
							+ " did not answer on 127.0.0.1:" + this.port + " within "
							+ RedisProcess.STARTUP_TIMEOUT.toSeconds() + "s. Its log:" + System.lineSeparator()
							+ this.container.getLogs());
				}
				RedisProcess.sleep(Duration.ofMillis(20));
			}
		}

	}

}
