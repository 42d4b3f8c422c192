package io.github.ratelimit.benchmarks.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Stream;

import com.zaxxer.hikari.HikariDataSource;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.proxy.ProxyManager;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.benchmarks.loop.ClosedLoop;
import io.github.ratelimit.benchmarks.loop.ClosedLoop.Decider;
import io.github.ratelimit.benchmarks.loop.Options;
import io.github.ratelimit.benchmarks.redis.RedisDeciders;
import io.github.ratelimit.internal.jdbc.JdbcStateStorage;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;

/**
 * Closed-loop benchmark of PostgreSQL rate limit decisions, beside Bucket4j's PostgreSQL
 * back-end: for each limiter, workload (one hot key, or keys drawn at random from many
 * identities) and number of concurrent callers, the callers decide as fast as the database
 * answers for a bounded time; the run reports decisions per second, latency percentiles and
 * the CPU the client and the database spent per decision. Runs are repeated in rounds, the
 * limiters in a different order each round, and summarised as medians with their spread.
 * Then it checks exactness: callers split across two stores of their own (two pools, as two
 * application instances have) drain one bucket of a small capacity that does not refill
 * during the check, and must be admitted exactly that many times.
 * <p>
 * The limiters: {@code ours} (the store an application gets: every storage call on the
 * store's bounded pool, of as many threads as callers unless {@code --store-threads} says
 * otherwise, as {@code ratelimit.jdbc.threads} is sized), {@code ours-direct} (the same
 * storage called on the caller's thread), {@code ours-2} (two limits per request, one
 * transaction), {@code bucket4j} (Bucket4j's {@code SELECT ... FOR UPDATE} proxy
 * manager), {@code bucket4j-2} (two limits, two buckets: two transactions) and, when
 * {@code --redis-port} is given, {@code redis} (this library's Redis store).
 * <p>
 * {@code java -cp benchmarks.jar io.github.ratelimit.benchmarks.jdbc.PostgresDecisionBenchmark
 * --port 5432 [--database bench] [--user postgres] [--seconds 5] [--warmup 2] [--rounds 3]
 * [--callers 1,64] [--workloads hot,many] [--limiters ours,bucket4j,ours-2,bucket4j-2]
 * [--identities 100000] [--prefill true] [--store-threads 64] [--exact-capacity 2000] [--exact-callers 64]
 * [--server-pid PID --clock-ticks 100] [--redis-port PORT]}. The database must be one
 * created for the benchmark ({@code benchmarks/postgres-bench.sh} does), with Bucket4j's
 * table {@value PostgresDeciders#BUCKET4J_TABLE}; the harness creates this library's.
 */
public final class PostgresDecisionBenchmark {

	private PostgresDecisionBenchmark() {
	}

	/**
	 * Runs the benchmark.
	 * @param args options, see the class description
	 * @throws InterruptedException when interrupted
	 */
	public static void main(String[] args) throws InterruptedException {
		Options options = Options.parse(args);
		String url = "jdbc:postgresql://" + options.get("host", "127.0.0.1") + ":" + options.required("port") + "/"
				+ options.get("database", "bench");
		String user = options.get("user", "postgres");
		Duration measure = Duration.ofSeconds(options.number("seconds", 5));
		Duration warmup = Duration.ofSeconds(options.number("warmup", 2));
		int rounds = (int) options.number("rounds", 3);
		int identities = (int) options.number("identities", 100_000);
		List<Integer> callerCounts = options.list("callers", "1,64").stream().map(Integer::parseInt).toList();
		List<String> workloads = options.list("workloads", "hot,many");
		List<String> limiterNames = new ArrayList<>(options.list("limiters", "ours,bucket4j,ours-2,bucket4j-2"));
		boolean prefill = Boolean.parseBoolean(options.get("prefill", "true"));
		long exactCapacity = options.number("exact-capacity", 2000);
		int exactCallers = (int) options.number("exact-callers", 64);
		long serverPid = options.number("server-pid", -1);
		long clockTicks = options.number("clock-ticks", 100);
		String redisPort = options.get("redis-port", "");
		if (!redisPort.isEmpty() && !limiterNames.contains("redis")) {
			limiterNames.add("redis");
		}
		int poolSize = callerCounts.stream().mapToInt(Integer::intValue).max().orElse(1);
		int storeThreads = (int) options.number("store-threads", poolSize);

		List<AutoCloseable> resources = new ArrayList<>();
		try {
			HikariDataSource oursPool = PostgresDeciders.pool(url, user, poolSize, "ours");
			resources.add(oursPool);
			HikariDataSource bucket4jPool = PostgresDeciders.pool(url, user, poolSize, "bucket4j");
			resources.add(bucket4jPool);
			JdbcStateStorage storage = PostgresDeciders.storage(oursPool);
			RateLimitStore store = PostgresDeciders.blockingStore(storage, storeThreads);
			resources.add(0, (AutoCloseable) store);
			ProxyManager<String> proxies = PostgresDeciders.bucket4jProxies(bucket4jPool);
			Map<String, Supplier<Decider>> factories = new LinkedHashMap<>();
			factories.put("ours", () -> PostgresDeciders.ours(store));
			factories.put("ours-direct", () -> PostgresDeciders.ours(RateLimitStores.atomic(storage)));
			factories.put("ours-2", () -> PostgresDeciders.oursTwoLimits(store));
			factories.put("bucket4j", () -> PostgresDeciders.bucket4j(proxies));
			factories.put("bucket4j-2", () -> PostgresDeciders.bucket4jTwoLimits(proxies));
			factories.put("redis", () -> {
				LettuceConnectionFactory redis = new LettuceConnectionFactory(
						new RedisStandaloneConfiguration("127.0.0.1", Integer.parseInt(redisPort)),
						LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).build());
				redis.afterPropertiesSet();
				redis.start();
				resources.add(redis::destroy);
				return RedisDeciders.ours(redis);
			});
			Map<String, Decider> limiters = new LinkedHashMap<>();
			for (String name : limiterNames) {
				Supplier<Decider> factory = factories.get(name);
				if (factory == null) {
					throw new IllegalArgumentException("--limiters: unknown limiter " + name);
				}
				limiters.put(name, factory.get());
			}
			String[] ids = new String[identities];
			for (int i = 0; i < identities; i++) {
				ids[i] = "user-" + i;
			}
			System.out.printf(Locale.ROOT,
					"# %s, %d cores, %s %s, pools of %d connections, store threads %d, %ds per run after %ds warm-up, "
							+ "%d identities%n",
					serverVersion(oursPool), Runtime.getRuntime().availableProcessors(),
					System.getProperty("java.vm.name"), System.getProperty("java.version"), poolSize, storeThreads,
					measure.toSeconds(), warmup.toSeconds(), identities);
			for (Map.Entry<String, Decider> limiter : limiters.entrySet()) {
				if (prefill && workloads.contains("many")) {
					// every identity's rows exist before the first run, as in a service that has run a while
					long started = System.nanoTime();
					prefill(limiter.getValue(), ids, poolSize);
					System.out.printf(Locale.ROOT, "# %s: %d identities prefilled in %.1f s%n", limiter.getKey(),
							identities, (System.nanoTime() - started) / 1e9);
				}
				// JIT and connection warm-up, not measured
				ClosedLoop.run(limiter.getValue(), "many", Math.min(8, poolSize), ids, Duration.ofSeconds(5));
			}
			System.out.printf(Locale.ROOT, "# rows: ours %d, bucket4j %d%n", storage.size(),
					count(bucket4jPool, PostgresDeciders.BUCKET4J_TABLE));
			Map<String, List<Run>> results = new TreeMap<>();
			System.out.println("| round | limiter | keys | callers | decisions/s | p50 µs | p99 µs | admitted "
					+ "| errors | client CPU µs/decision | server CPU µs/decision |");
			System.out.println("|---|---|---|---|---|---|---|---|---|---|---|");
			List<String> order = new ArrayList<>(limiters.keySet());
			for (int round = 1; round <= rounds; round++) {
				for (String workload : workloads) {
					for (int callers : callerCounts) {
						for (String name : order) {
							Decider decider = limiters.get(name);
							ClosedLoop.run(decider, workload, callers, ids, warmup);
							long clientCpu = processCpuNanos();
							long serverCpu = serverCpuNanos(serverPid, clockTicks);
							ClosedLoop.Result measured = ClosedLoop.run(decider, workload, callers, ids, measure);
							Run result = new Run(measured,
									(processCpuNanos() - clientCpu) / 1e3 / measured.decisions(),
									// the Redis server is no PostgreSQL process
									(serverPid < 0 || name.equals("redis")) ? Double.NaN
											: (serverCpuNanos(serverPid, clockTicks) - serverCpu) / 1e3
													/ measured.decisions());
							results.computeIfAbsent(String.format(Locale.ROOT, "%s|%s|%04d", name, workload, callers),
									(k) -> new ArrayList<>())
								.add(result);
							System.out.printf(Locale.ROOT, "| %d | %s | %s | %d | %.0f | %d | %d | %.4f | %d | %.1f | %s |%n",
									round, name, workload, callers, measured.perSecond(), measured.p50Micros(),
									measured.p99Micros(),
									(double) measured.admitted() / Math.max(1, measured.decisions()), measured.errors(),
									result.clientCpuMicros, cpu(result.serverCpuMicros));
						}
					}
				}
				// another order next round, so that no limiter always runs first or last
				order.add(order.remove(0));
			}
			summarise(results);
			System.out.printf(Locale.ROOT, "%n# rows: ours %d, bucket4j %d%n", storage.size(),
					count(bucket4jPool, PostgresDeciders.BUCKET4J_TABLE));
			for (AutoCloseable resource : resources) {
				resource.close();
			}
			resources.clear();
			// the pools' backends have ended, and reported their counts as they did
			tableStatistics(url, user, storage.table());
			if (exactCapacity > 0) {
				System.out.println();
				System.out.println("| exactness | instances | callers | capacity | attempts | admitted | errors | exact |");
				System.out.println("|---|---|---|---|---|---|---|---|");
				exactOurs(url, user, exactCallers, exactCapacity);
				exactBucket4j(url, user, exactCallers, exactCapacity);
			}
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException interrupted) {
				throw interrupted;
			}
			throw new IllegalStateException("The benchmark failed: " + ex, ex);
		}
		finally {
			for (AutoCloseable resource : resources) {
				try {
					resource.close();
				}
				catch (Exception ex) {
					System.err.println("# could not close " + resource + ": " + ex);
				}
			}
		}
	}

	/** Decides once for every identity, with {@code callers} threads taking them in turn. */
	private static void prefill(Decider decider, String[] ids, int callers) throws InterruptedException {
		AtomicInteger next = new AtomicInteger();
		Thread[] threads = new Thread[callers];
		for (int t = 0; t < callers; t++) {
			threads[t] = new Thread(() -> {
				for (int i = next.getAndIncrement(); i < ids.length; i = next.getAndIncrement()) {
					decider.decide(ids[i]);
				}
			}, "prefill-" + t);
			threads[t].start();
		}
		for (Thread thread : threads) {
			thread.join();
		}
	}

	/**
	 * Two stores of this library, each on a pool and a storage of its own, as two
	 * application instances have, half the callers on each.
	 */
	private static void exactOurs(String url, String user, int callers, long capacity) throws Exception {
		int half = Math.max(1, callers / 2);
		RateLimit limit = new RateLimit("exact", Algorithm.TOKEN_BUCKET, capacity, 1, Duration.ofDays(1));
		String identity = "exact-" + System.currentTimeMillis();
		try (HikariDataSource first = PostgresDeciders.pool(url, user, half, "exact-1");
				HikariDataSource second = PostgresDeciders.pool(url, user, half, "exact-2")) {
			RateLimitStore one = PostgresDeciders.blockingStore(PostgresDeciders.storage(first), half);
			RateLimitStore other = PostgresDeciders.blockingStore(PostgresDeciders.storage(second), half);
			try {
				exactness("ours", callers, capacity, identity,
						(index) -> store(((index % 2) == 0) ? one : other, limit));
			}
			finally {
				((AutoCloseable) one).close();
				((AutoCloseable) other).close();
			}
		}
	}

	/** The same with two Bucket4j proxy managers. */
	private static void exactBucket4j(String url, String user, int callers, long capacity) throws Exception {
		int half = Math.max(1, callers / 2);
		BucketConfiguration configuration = PostgresDeciders.bucket4jLimit(capacity, 1, Duration.ofDays(1));
		String key = "exact:" + System.currentTimeMillis();
		try (HikariDataSource first = PostgresDeciders.pool(url, user, half, "exact-1");
				HikariDataSource second = PostgresDeciders.pool(url, user, half, "exact-2")) {
			ProxyManager<String> one = PostgresDeciders.bucket4jProxies(first);
			ProxyManager<String> other = PostgresDeciders.bucket4jProxies(second);
			exactness("bucket4j", callers, capacity, key, (index) -> {
				ProxyManager<String> proxies = ((index % 2) == 0) ? one : other;
				return (identity) -> proxies.builder().build(identity, () -> configuration).tryConsume(1);
			});
		}
	}

	private static Decider store(RateLimitStore store, RateLimit limit) {
		return (identity) -> store.tryAcquire(List.of(new Acquisition(limit, identity, 1))).allowed();
	}

	/**
	 * Callers, each on the decider made for its index, attempt twice the capacity in all on
	 * one identity, together; prints whether exactly the capacity was admitted.
	 */
	private static void exactness(String name, int callers, long capacity, String identity,
			java.util.function.IntFunction<Decider> deciders) throws InterruptedException {
		long attemptsEach = (2 * capacity + callers - 1) / callers;
		AtomicLong admitted = new AtomicLong();
		AtomicLong errors = new AtomicLong();
		CountDownLatch go = new CountDownLatch(1);
		Thread[] threads = new Thread[callers];
		for (int t = 0; t < callers; t++) {
			Decider decider = deciders.apply(t);
			threads[t] = new Thread(() -> {
				try {
					go.await();
				}
				catch (InterruptedException ex) {
					return;
				}
				for (long i = 0; i < attemptsEach; i++) {
					try {
						if (decider.decide(identity)) {
							admitted.incrementAndGet();
						}
					}
					catch (RuntimeException ex) {
						errors.incrementAndGet();
					}
				}
			}, "exact-" + t);
			threads[t].start();
		}
		go.countDown();
		for (Thread thread : threads) {
			thread.join();
		}
		System.out.printf(Locale.ROOT, "| %s | 2 | %d | %d | %d | %d | %d | %s |%n", name, callers, capacity,
				attemptsEach * callers, admitted.get(), errors.get(),
				(admitted.get() == capacity && errors.get() == 0) ? "yes" : "NO");
	}

	private static void summarise(Map<String, List<Run>> results) {
		System.out.println();
		System.out.println("| limiter | keys | callers | decisions/s median (min–max) | p50 µs median "
				+ "| p99 µs median (min–max) | client CPU µs/decision | server CPU µs/decision | errors |");
		System.out.println("|---|---|---|---|---|---|---|---|---|");
		Map<String, Double> medians = new TreeMap<>();
		for (Map.Entry<String, List<Run>> entry : results.entrySet()) {
			String[] name = entry.getKey().split("\\|");
			List<Run> runs = entry.getValue();
			double[] rates = runs.stream().mapToDouble((r) -> r.measured.perSecond()).sorted().toArray();
			long[] p50 = runs.stream().mapToLong((r) -> r.measured.p50Micros()).sorted().toArray();
			long[] p99 = runs.stream().mapToLong((r) -> r.measured.p99Micros()).sorted().toArray();
			double[] clientCpu = runs.stream().mapToDouble((r) -> r.clientCpuMicros).sorted().toArray();
			double[] serverCpu = runs.stream().mapToDouble((r) -> r.serverCpuMicros).sorted().toArray();
			long errors = runs.stream().mapToLong((r) -> r.measured.errors()).sum();
			medians.put(entry.getKey(), rates[rates.length / 2]);
			System.out.printf(Locale.ROOT, "| %s | %s | %d | %.0f (%.0f–%.0f) | %d | %d (%d–%d) | %.1f | %s | %d |%n",
					name[0], name[1], Integer.parseInt(name[2]), rates[rates.length / 2], rates[0],
					rates[rates.length - 1], p50[p50.length / 2], p99[p99.length / 2], p99[0], p99[p99.length - 1],
					clientCpu[clientCpu.length / 2], cpu(serverCpu[serverCpu.length / 2]), errors);
		}
		System.out.println();
		System.out.println("| ratio of medians | keys | callers | decisions/s |");
		System.out.println("|---|---|---|---|");
		for (String[] pair : List.of(new String[] { "ours", "bucket4j" }, new String[] { "ours-2", "bucket4j-2" },
				new String[] { "ours-direct", "bucket4j" }, new String[] { "ours-direct", "ours" })) {
			medians.forEach((key, rate) -> {
				String[] name = key.split("\\|");
				Double other = medians.get(pair[1] + "|" + name[1] + "|" + name[2]);
				if (name[0].equals(pair[0]) && other != null) {
					System.out.printf(Locale.ROOT, "| %s / %s | %s | %d | %.2f |%n", pair[0], pair[1], name[1],
							Integer.parseInt(name[2]), rate / other);
				}
			});
		}
	}

	/**
	 * What the runs did to both tables: rows inserted, row versions written by updates and
	 * how many of them were heap-only (HOT: no index entry written), dead versions left.
	 */
	private static void tableStatistics(String url, String user, String oursTable) throws Exception {
		try (HikariDataSource dataSource = PostgresDeciders.pool(url, user, 1, "statistics");
				var connection = dataSource.getConnection();
				var statement = connection.prepareStatement("SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, "
						+ "n_dead_tup, pg_total_relation_size(relid) FROM pg_stat_user_tables WHERE relname IN (?, ?) "
						+ "ORDER BY relname")) {
			statement.setString(1, oursTable);
			statement.setString(2, PostgresDeciders.BUCKET4J_TABLE);
			try (var rows = statement.executeQuery()) {
				System.out.println();
				System.out.println("| table | rows inserted | rows updated | of which HOT | dead rows | size with indexes |");
				System.out.println("|---|---|---|---|---|---|");
				while (rows.next()) {
					System.out.printf(Locale.ROOT, "| %s | %d | %d | %d | %d | %d MB |%n", rows.getString(1),
							rows.getLong(2), rows.getLong(3), rows.getLong(4), rows.getLong(5),
							rows.getLong(6) / (1024 * 1024));
				}
			}
		}
	}

	private static String serverVersion(HikariDataSource dataSource) throws Exception {
		try (var connection = dataSource.getConnection(); var statement = connection.createStatement();
				var rows = statement.executeQuery("SELECT version()")) {
			rows.next();
			return rows.getString(1).split(",")[0];
		}
	}

	private static long count(HikariDataSource dataSource, String table) throws Exception {
		try (var connection = dataSource.getConnection(); var statement = connection.createStatement();
				var rows = statement.executeQuery("SELECT count(*) FROM " + table)) {
			rows.next();
			return rows.getLong(1);
		}
	}

	/** CPU time this process (the callers, the pools and the drivers) has used. */
	private static long processCpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
			.getProcessCpuTime();
	}

	/**
	 * CPU time, user and system, that the PostgreSQL server process {@code pid} and its
	 * children (the backends serving the pools, the WAL writer, autovacuum) have used, from
	 * {@code /proc}; 0 when no pid is given.
	 */
	private static long serverCpuNanos(long pid, long clockTicks) {
		if (pid < 0) {
			return 0;
		}
		long ticks = 0;
		try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
			for (Path process : processes.filter((p) -> p.getFileName().toString().chars().allMatch(Character::isDigit))
				.toList()) {
				String stat;
				try {
					stat = Files.readString(process.resolve("stat"));
				}
				catch (IOException ex) {
					// the process ended meanwhile
					continue;
				}
				// pid (comm) state ppid ... utime stime: fields 14 and 15, counted after the comm
				String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
				long self = Long.parseLong(process.getFileName().toString());
				if (self == pid || Long.parseLong(fields[1]) == pid) {
					ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return ticks * 1_000_000_000L / clockTicks;
	}

	/** A CPU figure; {@code -} when it was not measured. */
	private static String cpu(double micros) {
		return Double.isNaN(micros) ? "-" : String.format(Locale.ROOT, "%.1f", micros);
	}

	/** One measured run and the CPU it cost. */
	private record Run(ClosedLoop.Result measured, double clientCpuMicros, double serverCpuMicros) {
	}

}
