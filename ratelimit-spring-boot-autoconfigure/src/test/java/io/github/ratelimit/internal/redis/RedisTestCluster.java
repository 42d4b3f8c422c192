package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.lettuce.core.SocketOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * A real Redis Cluster for tests: {@code redis-server --cluster-enabled yes} processes on
 * loopback ports, each in its own temporary directory, joined by
 * {@code redis-cli --cluster create}. It always runs as processes, even when Docker is
 * available, because cluster nodes announce their own addresses and containers would need
 * host networking for clients outside Docker to follow redirects.
 * <p>
 * Nodes use a 2s {@code cluster-node-timeout} and {@code cluster-replica-validity-factor 0}
 * so a replica takes over a killed master within a few seconds, and
 * {@code repl-diskless-sync-delay 0} so replicas sync at once rather than after Redis's
 * default five seconds, and {@code shutdown-timeout 0} so closing never waits for replicas. Most tests use
 * {@link #shared()} (three masters, no replicas) and {@link #flushAll()} between tests;
 * failover tests start their own with {@link #start(int, int)} and close it. For
 * {@code @SpringBootTest}, register {@link #properties(DynamicPropertyRegistry)} from a
 * {@code @DynamicPropertySource} method.
 */
public final class RedisTestCluster implements AutoCloseable {

	/** Number of hash slots a healthy cluster covers. */
	public static final int SLOTS = 16384;

	private static final Duration CREATE_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration HEALTHY_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration PROBE_TIMEOUT = Duration.ofMillis(500);

	private static final String NODE_TIMEOUT_MILLIS = "2000";

	private static RedisTestCluster shared;

	private final int masters;

	private final Path dir;

	private final List<RedisProcess> nodes = new CopyOnWriteArrayList<>();

	private final boolean isShared;

	private final List<LettuceConnectionFactory> connectionFactories = new CopyOnWriteArrayList<>();

	private final AutoCloseable stopAtExit = this::stop;

	private RedisTestCluster(int masters, Path dir, boolean isShared) {
		this.masters = masters;
		this.dir = dir;
		this.isShared = isShared;
		RedisTestSupport.closeAtExit(this.stopAtExit);
	}

	/**
	 * Returns the cluster shared by every test in this JVM (three masters, no replicas),
	 * starting it on first use. It stops at JVM exit and its nodes cannot be killed.
	 * @return the shared cluster
	 */
	public static synchronized RedisTestCluster shared() {
		if (shared == null) {
			shared = create(3, 0, true);
		}
		return shared;
	}

	/**
	 * Starts a cluster of the caller's own and waits until it is healthy. Close it when
	 * done; one left open is stopped at JVM exit.
	 * @param masters how many masters share the slots, at least 3
	 * @param replicasPerMaster how many replicas follow each master
	 * @return a healthy cluster
	 */
	public static RedisTestCluster start(int masters, int replicasPerMaster) {
		return create(masters, replicasPerMaster, false);
	}

	private static RedisTestCluster create(int masters, int replicasPerMaster, boolean isShared) {
		if (masters < 3) {
			throw new IllegalArgumentException("masters must be at least 3: " + masters);
		}
		if (replicasPerMaster < 0) {
			throw new IllegalArgumentException("replicasPerMaster must not be negative: " + replicasPerMaster);
		}
		RedisTestSupport.prepare();
		Path server = RedisTestSupport.executable("redis-server", "to run a Redis Cluster for the tests");
		Path cli = RedisTestSupport.executable("redis-cli", "to create a Redis Cluster for the tests");
		RedisTestCluster cluster = new RedisTestCluster(masters, RedisTestSupport.createTempDir(), isShared);
		try {
			for (int i = 0; i < masters * (1 + replicasPerMaster); i++) {
				cluster.nodes.add(RedisProcess.start(server, cluster.dir.resolve("node-" + i),
						() -> List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
								"--cluster-node-timeout", NODE_TIMEOUT_MILLIS, "--cluster-port",
								Integer.toString(RedisTestSupport.freePort()), "--cluster-replica-validity-factor",
								"0", "--repl-diskless-sync-delay", "0", "--shutdown-timeout", "0")));
			}
			cluster.join(cli, replicasPerMaster);
			cluster.awaitHealthy();
			return cluster;
		}
		catch (RuntimeException ex) {
			cluster.stop();
			throw ex;
		}
	}

	/**
	 * Registers {@code spring.data.redis.cluster.nodes} of the {@link #shared() shared
	 * cluster}, which starts when the test context is built, and turns on Lettuce's
	 * adaptive and periodic topology refresh.
	 * @param registry the registry of a {@code @DynamicPropertySource} method
	 */
	public static void properties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.cluster.nodes",
				() -> shared().nodes().stream().map(HostAndPort::toString).collect(Collectors.joining(",")));
		registry.add("spring.data.redis.lettuce.cluster.refresh.adaptive", () -> true);
		registry.add("spring.data.redis.lettuce.cluster.refresh.period", () -> "1s");
	}

	/**
	 * Returns every node in start order, running or killed.
	 * @return the nodes
	 */
	public List<HostAndPort> nodes() {
		return this.nodes.stream().map((node) -> new HostAndPort(RedisTestSupport.LOOPBACK, node.port())).toList();
	}

	/**
	 * Returns the ports of every node in start order, running or killed.
	 * @return the ports
	 */
	public List<Integer> ports() {
		return this.nodes.stream().map(RedisProcess::port).toList();
	}

	/**
	 * Returns the running nodes that are masters now, in start order. After a failover the
	 * promoted replica takes the killed master's place in this list.
	 * @return the masters
	 */
	public List<HostAndPort> masters() {
		List<HostAndPort> masters = new ArrayList<>();
		for (RedisProcess node : this.nodes) {
			if (node.isAlive()) {
				try {
					Object replication = RedisTestSupport.command(RedisTestSupport.LOOPBACK, node.port(),
							RedisTestServer.COMMAND_TIMEOUT, "INFO", "replication");
					if ("master".equals(RedisTestSupport.field(replication, "role"))) {
						masters.add(new HostAndPort(RedisTestSupport.LOOPBACK, node.port()));
					}
				}
				catch (IOException ex) {
					throw new UncheckedIOException("Cluster node 127.0.0.1:" + node.port() + " did not answer", ex);
				}
			}
		}
		return masters;
	}

	/**
	 * Builds a started connection factory for this cluster, seeded with its running nodes,
	 * with a {@link RedisTestServer#COMMAND_TIMEOUT two-second command timeout}, quick
	 * reconnects, and topology refresh both adaptive (on redirects and reconnects) and
	 * periodic (every second), so it follows a failover. It is destroyed when this cluster
	 * closes; a test may destroy it sooner.
	 * @return a started factory
	 */
	public LettuceConnectionFactory connectionFactory() {
		RedisClusterConfiguration configuration = new RedisClusterConfiguration(this.nodes.stream()
			.filter(RedisProcess::isAlive)
			.map((node) -> RedisTestSupport.LOOPBACK + ":" + node.port())
			.toList());
		configuration.setMaxRedirects(5);
		ClusterTopologyRefreshOptions refresh = ClusterTopologyRefreshOptions.builder()
			.enableAllAdaptiveRefreshTriggers()
			.adaptiveRefreshTriggersTimeout(Duration.ofMillis(500))
			.enablePeriodicRefresh(Duration.ofSeconds(1))
			.build();
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			.clientResources(RedisTestSupport.clientResources())
			.clientOptions(ClusterClientOptions.builder()
				.topologyRefreshOptions(refresh)
				.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(1)).build())
				.build())
			.commandTimeout(RedisTestServer.COMMAND_TIMEOUT)
			.shutdownQuietPeriod(Duration.ZERO)
			.shutdownTimeout(Duration.ofMillis(500))
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration, client);
		factory.afterPropertiesSet();
		factory.start();
		this.connectionFactories.add(factory);
		return factory;
	}

	/**
	 * Deletes every key on every master.
	 */
	public void flushAll() {
		for (HostAndPort master : masters()) {
			try {
				RedisTestSupport.command(master.host(), master.port(), RedisTestServer.COMMAND_TIMEOUT, "FLUSHALL");
			}
			catch (IOException ex) {
				throw new UncheckedIOException("FLUSHALL failed on " + master, ex);
			}
		}
	}

	/**
	 * Kills a master with SIGKILL and returns at once; its replica, if any, takes over
	 * once the others have marked it failed (about two seconds). Wait for that with
	 * {@link #awaitHealthy()}.
	 * @param index the master's position in {@link #masters()}
	 * @return the killed node, for {@link #restartNode(HostAndPort)}
	 */
	public HostAndPort killMaster(int index) {
		assertOwned("kill its nodes");
		List<HostAndPort> masters = masters();
		if (index < 0 || index >= masters.size()) {
			throw new IllegalArgumentException(
					"index must be between 0 and " + (masters.size() - 1) + " (masters: " + masters + "): " + index);
		}
		HostAndPort master = masters.get(index);
		process(master).kill();
		return master;
	}

	/**
	 * Starts a killed node again on its port; it rejoins with its old identity (as a
	 * replica when another node took over its slots). Wait with {@link #awaitHealthy()}.
	 * @param node one of {@link #nodes()}
	 */
	public void restartNode(HostAndPort node) {
		assertOwned("restart its nodes");
		process(node).restart();
	}

	/**
	 * Waits (at most 30 seconds) until every running node reports {@code cluster_state:ok}
	 * with all {@value #SLOTS} slots assigned and served, knows every node, the configured
	 * number of masters answer, every running replica is linked to its master, and no node
	 * is still forked to sync a replica.
	 * @throws IllegalStateException saying what is still wrong when time runs out
	 */
	public void awaitHealthy() {
		long deadline = System.nanoTime() + HEALTHY_TIMEOUT.toNanos();
		while (true) {
			String problem = healthProblem();
			if (problem == null) {
				return;
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("Redis Cluster in " + this.dir + " not healthy after "
						+ HEALTHY_TIMEOUT.toSeconds() + "s: " + problem);
			}
			RedisProcess.sleep(Duration.ofMillis(50));
		}
	}

	private String healthProblem() {
		int runningMasters = 0;
		for (RedisProcess node : this.nodes) {
			if (!node.isAlive()) {
				continue;
			}
			String name = "127.0.0.1:" + node.port();
			try {
				Object info = RedisTestSupport.command(RedisTestSupport.LOOPBACK, node.port(), PROBE_TIMEOUT,
						"CLUSTER", "INFO");
				String state = RedisTestSupport.field(info, "cluster_state");
				String assigned = RedisTestSupport.field(info, "cluster_slots_assigned");
				String ok = RedisTestSupport.field(info, "cluster_slots_ok");
				String known = RedisTestSupport.field(info, "cluster_known_nodes");
				if (!"ok".equals(state) || !Integer.toString(SLOTS).equals(assigned)
						|| !Integer.toString(SLOTS).equals(ok)) {
					return name + " reports cluster_state:" + state + ", cluster_slots_assigned:" + assigned
							+ ", cluster_slots_ok:" + ok;
				}
				if (!Integer.toString(this.nodes.size()).equals(known)) {
					return name + " knows " + known + " of " + this.nodes.size() + " nodes";
				}
				Object persistence = RedisTestSupport.command(RedisTestSupport.LOOPBACK, node.port(), PROBE_TIMEOUT,
						"INFO", "persistence");
				if (!"0".equals(RedisTestSupport.field(persistence, "rdb_bgsave_in_progress"))) {
					return name + " is still forked to sync a replica";
				}
				Object replication = RedisTestSupport.command(RedisTestSupport.LOOPBACK, node.port(), PROBE_TIMEOUT,
						"INFO", "replication");
				if ("master".equals(RedisTestSupport.field(replication, "role"))) {
					runningMasters++;
				}
				else if (!"up".equals(RedisTestSupport.field(replication, "master_link_status"))) {
					return name + " is a replica whose master link is "
							+ RedisTestSupport.field(replication, "master_link_status");
				}
			}
			catch (IOException ex) {
				return name + " does not answer: " + ex.getMessage();
			}
		}
		if (runningMasters != this.masters) {
			return runningMasters + " running masters, expected " + this.masters;
		}
		return null;
	}

	/**
	 * Stops every node and destroys the connection factories built here. Does nothing on
	 * the shared cluster, which stops at JVM exit.
	 */
	@Override
	public void close() {
		if (!this.isShared) {
			stop();
		}
	}

	private void stop() {
		RedisTestSupport.destroyAll(this.connectionFactories);
		// SIGTERM to all at once: they are gone long before a failover could start, and a
		// node stopping this way also ends its replication child process (SIGKILL would not)
		List<ProcessHandle> children = new ArrayList<>();
		for (RedisProcess node : this.nodes) {
			children.addAll(node.children());
			node.requestStop();
		}
		for (RedisProcess node : this.nodes) {
			node.stop();
		}
		RedisProcess.endAll(children);
		RedisTestSupport.deleteRecursively(this.dir);
		RedisTestSupport.closed(this.stopAtExit);
	}

	private void join(Path cli, int replicasPerMaster) {
		List<String> command = new ArrayList<>(List.of(cli.toString(), "--cluster", "create"));
		for (RedisProcess node : this.nodes) {
			command.add(RedisTestSupport.LOOPBACK + ":" + node.port());
		}
		command.addAll(List.of("--cluster-replicas", Integer.toString(replicasPerMaster), "--cluster-yes"));
		Path log = this.dir.resolve("cluster-create.log");
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(log.toFile())
				.start();
			process.getOutputStream().close();
			if (!process.waitFor(CREATE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
				process.destroyForcibly();
				process.waitFor(5, TimeUnit.SECONDS);
				throw new IllegalStateException("redis-cli --cluster create did not finish within "
						+ CREATE_TIMEOUT.toSeconds() + "s. Its output:" + System.lineSeparator()
						+ RedisTestSupport.tail(log, 40));
			}
			if (process.exitValue() != 0) {
				throw new IllegalStateException("redis-cli --cluster create failed with code "
						+ process.exitValue() + ". Its output:" + System.lineSeparator()
						+ RedisTestSupport.tail(log, 40));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not run " + command, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while creating the Redis Cluster", ex);
		}
	}

	private RedisProcess process(HostAndPort node) {
		return this.nodes.stream()
			.filter((candidate) -> candidate.port() == node.port())
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("Not a node of this cluster: " + node));
	}

	private void assertOwned(String action) {
		if (this.isShared) {
			throw new IllegalStateException("The shared Redis Cluster cannot " + action
					+ ": other tests use it. Use RedisTestCluster.start(masters, replicas) for a cluster of your own");
		}
	}

	@Override
	public String toString() {
		return "RedisTestCluster" + nodes() + (this.isShared ? " (shared)" : "");
	}

	/**
	 * The address of a cluster node.
	 *
	 * @param host its host, a loopback address
	 * @param port its port
	 */
	public record HostAndPort(String host, int port) {

		@Override
		public String toString() {
			return this.host + ":" + this.port;
		}

	}

}
