package io.github.ratelimit.benchmarks.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import io.lettuce.core.resource.EpollProvider;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.benchmarks.loop.ClosedLoop;
import io.github.ratelimit.benchmarks.loop.ClosedLoop.Decider;
import io.github.ratelimit.benchmarks.loop.Options;
import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.internal.redis.RedisRateLimitStore;
import io.github.ratelimit.internal.redis.RedisScripts;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;

/**
 * Closed-loop benchmark of Redis rate limit decisions: for each limiter, workload (one hot
 * key, or keys drawn at random from many identities) and number of concurrent callers, the
 * callers decide as fast as Redis answers for a bounded time; the run reports decisions per
 * second, latency percentiles and Redis commands per decision from {@code INFO
 * commandstats}. Runs are repeated in rounds, the limiters in a different order each round,
 * and summarised as medians with their spread.
 * <p>
 * A caller is a thread blocking on each decision, as a servlet thread does: the store's
 * API is synchronous. Lettuce multiplexes the callers' commands on one shared connection,
 * pipelining those issued while others are in flight.
 * <p>
 * {@code java -cp benchmarks.jar io.github.ratelimit.benchmarks.redis.RedisDecisionBenchmark
 * --port 6379 [--seconds 8] [--warmup 2] [--rounds 3] [--callers 1,8,64]
 * [--workloads hot,many] [--limiters ours,bucket4j,gateway] [--identities 100000]};
 * {@code ... RedisDecisionBenchmark script} prints the script the store runs for token
 * buckets with {@code EVALSHA}, {@code ... library} the same as the function library it
 * calls with {@code FCALL}. The Redis server must be one started for the benchmark
 * ({@code benchmarks/redis-bench.sh} does): the run flushes it and resets its statistics.
 */
public final class RedisDecisionBenchmark {

	/** Name of the runs of {@code redis-benchmark} calling the store's function. */
	private static final String CEILING = "redis-benchmark";

	private static final String IDENTITY = "IDENTITY";

	private static final List<String> EXCLUDED_COMMANDS = List.of("info", "config|resetstat", "config|get", "ping");

	private RedisDecisionBenchmark() {
	}

	/**
	 * Runs the benchmark, or prints the store's script.
	 * @param args options, see the class description
	 * @throws InterruptedException when interrupted
	 */
	public static void main(String[] args) throws InterruptedException {
		if (args.length > 0 && args[0].equals("script")) {
			System.out.print(RedisScripts.acquire(List.of(AlgorithmSpec.of(Algorithm.TOKEN_BUCKET))).getScriptAsString());
			return;
		}
		if (args.length > 0 && args[0].equals("library")) {
			System.out.print(RedisScripts.acquireFunction(List.of(AlgorithmSpec.of(Algorithm.TOKEN_BUCKET))).library());
			return;
		}
		Options options = Options.parse(args);
		String host = options.get("host", "127.0.0.1");
		int port = Integer.parseInt(options.required("port"));
		Duration measure = Duration.ofSeconds(Long.parseLong(options.get("seconds", "8")));
		Duration warmup = Duration.ofSeconds(Long.parseLong(options.get("warmup", "2")));
		int rounds = Integer.parseInt(options.get("rounds", "3"));
		int identities = Integer.parseInt(options.get("identities", "100000"));
		List<Integer> callerCounts = Arrays.stream(options.get("callers", "1,8,64").split(","))
			.map(Integer::parseInt)
			.toList();
		List<String> workloads = List.of(options.get("workloads", "hot,many").split(","));
		List<String> limiterNames = List.of(options.get("limiters", "ours,bucket4j,gateway").split(","));
		long ceilingRequests = Long.parseLong(options.get("ceiling-requests", "50000"));
		String redisBenchmark = options.get("redis-benchmark", "redis-benchmark");

		LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(host, port),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).build());
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		// before the first connection opens: Lettuce attaches listeners to connections as they open
		Map<String, LongAdder> sent = new ConcurrentHashMap<>();
		connectionFactory.getRequiredNativeClient().addListener(new CommandListener() {
			@Override
			public void commandStarted(CommandStartedEvent event) {
				sent.computeIfAbsent(event.getCommand().getType().toString(), (type) -> new LongAdder()).increment();
			}
		});
		RedisClient adminClient = RedisClient.create(RedisURI.create(host, port));
		try (StatefulRedisConnection<String, String> adminConnection = adminClient.connect()) {
			RedisCommands<String, String> admin = adminConnection.sync();
			admin.flushall();
			Map<String, Function<LettuceConnectionFactory, Decider>> factories = Map.of("ours", RedisDeciders::ours,
					"bucket4j", RedisDeciders::bucket4j, "gateway", RedisDeciders::gateway);
			Map<String, Decider> limiters = new LinkedHashMap<>();
			for (String name : limiterNames) {
				Function<LettuceConnectionFactory, Decider> factory = factories.get(name);
				if (factory == null) {
					throw new IllegalArgumentException("--limiters: unknown limiter " + name);
				}
				limiters.put(name, factory.apply(connectionFactory));
			}
			String[] ids = new String[identities];
			for (int i = 0; i < identities; i++) {
				ids[i] = "user-" + i;
			}
			System.out.printf(Locale.ROOT, "# redis %s, %d cores, %s %s, Lettuce on %s, %ds per run after %ds warm-up%n",
					admin.info("server").lines().filter((l) -> l.startsWith("redis_version:")).findFirst().orElse("?"),
					Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.name"),
					System.getProperty("java.version"), EpollProvider.isAvailable() ? "epoll" : "NIO",
					measure.toSeconds(), warmup.toSeconds());
			for (Map.Entry<String, Decider> limiter : limiters.entrySet()) {
				// JIT and connection warm-up, not measured
				run(limiter.getValue(), "many", 8, ids, Duration.ofSeconds(5));
			}
			Map<String, List<Run>> results = new TreeMap<>();
			System.out.println("| round | limiter | keys | callers | decisions/s | p50 µs | p99 µs | admitted "
					+ "| errors | client CPU µs/decision | Redis CPU µs/decision | sent/decision "
					+ "| Redis commands/decision | per command |");
			System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
			List<String> order = new ArrayList<>(limiters.keySet());
			List<String> ceilingCall = ceilingCall(admin);
			if (ceilingRequests > 0) {
				order.add(CEILING);
			}
			for (int round = 1; round <= rounds; round++) {
				for (String workload : workloads) {
					for (int callers : callerCounts) {
						for (String name : order) {
							Run result;
							if (name.equals(CEILING)) {
								admin.configResetstat();
								double redisCpu = redisCpuSeconds(admin);
								result = ceiling(redisBenchmark, host, port, ceilingCall, workload, callers,
										ceilingRequests, identities);
								result.redisCpuMicros = (redisCpuSeconds(admin) - redisCpu) * 1e6 / result.decisions;
								result.commands = commandsPerDecision(admin.info("commandstats"), result.decisions);
							}
							else {
								Decider decider = limiters.get(name);
								run(decider, workload, callers, ids, warmup);
								admin.configResetstat();
								sent.clear();
								double redisCpu = redisCpuSeconds(admin);
								long clientCpu = processCpuNanos();
								result = run(decider, workload, callers, ids, measure);
								result.clientCpuMicros = (processCpuNanos() - clientCpu) / 1e3 / result.decisions;
								result.redisCpuMicros = (redisCpuSeconds(admin) - redisCpu) * 1e6 / result.decisions;
								result.commands = commandsPerDecision(admin.info("commandstats"), result.decisions);
								result.sent = perDecision(sent, result.decisions);
							}
							results.computeIfAbsent(String.format(Locale.ROOT, "%s|%s|%04d", name, workload, callers),
										(k) -> new ArrayList<>())
								.add(result);
							System.out.printf(Locale.ROOT,
									"| %d | %s | %s | %d | %.0f | %d | %d | %s | %d | %s | %.2f | %s | %.2f | %s |%n", round,
									name, workload, callers, result.perSecond(), result.p50Micros, result.p99Micros,
									result.admittedShare(), result.errors, cpu(result.clientCpuMicros),
									result.redisCpuMicros, format(result.sent), total(result.commands),
									format(result.commands));
						}
					}
				}
				// another order next round, so that no limiter always runs first or last
				order.add(order.remove(0));
			}
			summarise(results);
		}
		finally {
			adminClient.shutdown();
			connectionFactory.destroy();
		}
	}

	private static void summarise(Map<String, List<Run>> results) {
		System.out.println();
		System.out.println("| limiter | keys | callers | decisions/s median (min–max) | p50 µs median | p99 µs median (min–max) "
				+ "| client CPU µs/decision | Redis CPU µs/decision | sent/decision | Redis commands/decision |");
		System.out.println("|---|---|---|---|---|---|---|---|---|---|");
		for (Map.Entry<String, List<Run>> entry : results.entrySet()) {
			String[] name = entry.getKey().split("\\|");
			List<Run> runs = entry.getValue();
			double[] rates = runs.stream().mapToDouble(Run::perSecond).sorted().toArray();
			long[] p50 = runs.stream().mapToLong((r) -> r.p50Micros).sorted().toArray();
			long[] p99 = runs.stream().mapToLong((r) -> r.p99Micros).sorted().toArray();
			double[] commands = runs.stream().mapToDouble((r) -> total(r.commands)).sorted().toArray();
			double[] sent = runs.stream().mapToDouble((r) -> total(r.sent)).sorted().toArray();
			double[] clientCpu = runs.stream().mapToDouble((r) -> r.clientCpuMicros).sorted().toArray();
			double[] redisCpu = runs.stream().mapToDouble((r) -> r.redisCpuMicros).sorted().toArray();
			// redis-benchmark sends no command through the Java client
			String sentPerDecision = runs.get(0).sent.isEmpty() ? "-"
					: String.format(Locale.ROOT, "%.2f", sent[sent.length / 2]);
			System.out.printf(Locale.ROOT, "| %s | %s | %d | %.0f (%.0f–%.0f) | %d | %d (%d–%d) | %s | %.2f | %s | %.2f |%n",
					name[0], name[1], Integer.parseInt(name[2]), rates[rates.length / 2], rates[0], rates[rates.length - 1],
					p50[p50.length / 2], p99[p99.length / 2], p99[0], p99[p99.length - 1],
					cpu(clientCpu[clientCpu.length / 2]), redisCpu[redisCpu.length / 2], sentPerDecision,
					commands[commands.length / 2]);
		}
	}

	/** CPU time this process (the callers and the Lettuce client) has used. */
	private static long processCpuNanos() {
		return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
			.getProcessCpuTime();
	}

	/** CPU time the Redis server has used, user and system, from {@code INFO cpu}. */
	private static double redisCpuSeconds(RedisCommands<String, String> admin) {
		double seconds = 0;
		for (String line : admin.info("cpu").lines().toList()) {
			if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
				seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
			}
		}
		return seconds;
	}

	/** A client CPU figure; {@code -} for redis-benchmark, whose client is another process. */
	private static String cpu(double micros) {
		return Double.isNaN(micros) ? "-" : String.format(Locale.ROOT, "%.2f", micros);
	}

	/** Runs {@code callers} threads deciding in a closed loop for {@code duration}. */
	private static Run run(Decider decider, String workload, int callers, String[] ids, Duration duration)
			throws InterruptedException {
		ClosedLoop.Result result = ClosedLoop.run(decider, workload, callers, ids, duration);
		return new Run(result.decisions(), result.admitted(), result.errors(), result.elapsedNanos(),
				result.p50Micros(), result.p99Micros());
	}

	/**
	 * The call exactly as the store sends it for one token bucket limit, with the identity
	 * left as {@value #IDENTITY}: {@code FCALL} of the store's function, whose library is
	 * loaded here, its key for the limit, and the values the store passes (now from Redis
	 * {@code TIME}, acquire, one limit, its algorithm, capacity, emission interval and the
	 * cost, then the options: no least TTL, no wait, and a deadline, here far ahead).
	 */
	private static List<String> ceilingCall(RedisCommands<String, String> admin) {
		// the script the store sends for requests whose limits are token buckets
		List<AlgorithmSpec> tokenBucket = List.of(AlgorithmSpec.of(Algorithm.TOKEN_BUCKET));
		RedisScripts.RedisFunction function = RedisScripts.acquireFunction(tokenBucket);
		admin.functionLoad(function.library(), true);
		RateLimit limit = RedisDeciders.limit();
		String key = RedisRateLimitStore.builder(new LettuceConnectionFactory())
			.keyPrefix(RedisDeciders.KEY_PREFIX)
			.build()
			.key(new Acquisition(limit, IDENTITY, 1));
		return List.of("FCALL", function.name(), "1", key, "", "acquire",
				"1", "tb", Long.toString(limit.capacity()), Long.toString(limit.emissionIntervalMicros()), "1", "", "",
				"0", Long.toString(Long.MAX_VALUE / 2));
	}

	/**
	 * Runs {@code redis-benchmark} calling the store's script with {@code callers}
	 * connections: what Redis sustains for this script without a Java client.
	 */
	private static Run ceiling(String executable, String host, int port, List<String> call, String workload,
			int callers, long requests, int identities) {
		boolean hot = workload.equals("hot");
		List<String> command = new ArrayList<>(List.of(executable, "-h", host, "-p", Integer.toString(port), "-c",
				Integer.toString(callers), "-n", Long.toString(requests), "--csv"));
		if (!hot) {
			command.addAll(List.of("-r", Integer.toString(identities)));
		}
		for (String arg : call) {
			// redis-benchmark replaces __rand_int__ with a random number below identities
			command.add(arg.replace(IDENTITY, hot ? "hot" : "user-__rand_int__"));
		}
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			if (!process.waitFor(10, TimeUnit.MINUTES) || process.exitValue() != 0) {
				throw new IllegalStateException("redis-benchmark failed: " + output);
			}
			// "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms",...
			String last = output.lines().filter((line) -> line.startsWith("\"" + call.get(0))).reduce((a, b) -> b)
				.orElseThrow(() -> new IllegalStateException("No result from redis-benchmark: " + output));
			String[] columns = last.split("\",\"");
			double rps = Double.parseDouble(columns[1]);
			long p50 = Math.round(Double.parseDouble(columns[4]) * 1000);
			long p99 = Math.round(Double.parseDouble(columns[6]) * 1000);
			return new Run(requests, -1, 0, Math.round(requests * 1e9 / rps), p50, p99);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not run " + executable, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while running redis-benchmark", ex);
		}
	}

	/** Calls per decision of each command Redis ran, including those a script ran. */
	static Map<String, Double> commandsPerDecision(String commandStats, long decisions) {
		Map<String, Double> perDecision = new TreeMap<>();
		for (String line : commandStats.split("\r?\n")) {
			if (!line.startsWith("cmdstat_")) {
				continue;
			}
			String command = line.substring("cmdstat_".length(), line.indexOf(':'));
			if (EXCLUDED_COMMANDS.contains(command)) {
				continue;
			}
			int from = line.indexOf("calls=") + "calls=".length();
			int to = line.indexOf(',', from);
			long calls = Long.parseLong(line.substring(from, to));
			perDecision.put(command, (double) calls / Math.max(1, decisions));
		}
		return perDecision;
	}

	private static Map<String, Double> perDecision(Map<String, LongAdder> counts, long decisions) {
		Map<String, Double> perDecision = new TreeMap<>();
		counts.forEach((command, count) -> perDecision.put(command.toLowerCase(Locale.ROOT),
				(double) count.sum() / Math.max(1, decisions)));
		return perDecision;
	}

	private static double total(Map<String, Double> commands) {
		return commands.values().stream().mapToDouble(Double::doubleValue).sum();
	}

	private static String format(Map<String, Double> commands) {
		if (commands.isEmpty()) {
			return "-";
		}
		StringBuilder text = new StringBuilder();
		commands.forEach((command, calls) -> text.append((text.length() > 0) ? " " : "")
			.append(command)
			.append('=')
			.append(String.format(Locale.ROOT, "%.2f", calls)));
		return text.toString();
	}

	/** One measured run. */
	private static final class Run {

		final long decisions;

		final long admitted;

		final long errors;

		final long elapsedNanos;

		final long p50Micros;

		final long p99Micros;

		Map<String, Double> commands = Map.of();

		Map<String, Double> sent = Map.of();

		/** CPU this process used per decision; NaN for redis-benchmark. */
		double clientCpuMicros = Double.NaN;

		/** CPU the Redis server used per decision. */
		double redisCpuMicros;

		Run(long decisions, long admitted, long errors, long elapsedNanos, long p50Micros, long p99Micros) {
			this.decisions = decisions;
			this.admitted = admitted;
			this.errors = errors;
			this.elapsedNanos = elapsedNanos;
			this.p50Micros = p50Micros;
			this.p99Micros = p99Micros;
		}

		double perSecond() {
			return this.decisions * 1e9 / this.elapsedNanos;
		}

		String admittedShare() {
			return (this.admitted < 0) ? "n/a"
					: String.format(Locale.ROOT, "%.4f", (double) this.admitted / Math.max(1, this.decisions));
		}

	}

}
