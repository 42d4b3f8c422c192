package io.github.ratelimit.benchmarks.localfirst;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.HdrHistogram.Histogram;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.local.LocalFirstRateLimitStore;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.core.ThrottledLog;
import io.github.ratelimit.internal.redis.RedisRateLimitStore;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.internal.local.LocalFirstSettings;

/**
 * One application instance of a fleet sharing a Redis server, run as its own JVM by
 * {@code benchmarks/local-first-bench.sh}: its own Lettuce connection factory and
 * {@link RedisRateLimitStore} (as the auto-configuration builds it, with the default
 * 250 ms timeout), decided through a {@link LocalFirstRateLimitStore} syncing on its own
 * thread ({@code --mode local-first}) or by Redis on every request ({@code --mode exact}).
 * <p>
 * Callers are threads deciding one request of cost 1 after another on the in-place path
 * ({@code tryAcquire(limit, identity, 1, 0, decision)}), as a request thread does, with an
 * optional pause between two decisions. They first warm up for a second on a limit of
 * their own that always admits; the instance then creates {@code GO_FILE.INSTANCE.ready}
 * and waits for {@code GO_FILE} to name the start instant (epoch milliseconds), which the
 * script writes once every instance is ready, so that a slow JVM start on a busy machine
 * cannot shift one instance's window. From that instant, for the given seconds, they
 * decide on the measured token bucket, shared by every instance, for one identity or for
 * identities drawn at random. The instance then prints one line: attempts, admitted,
 * decisions per second, process CPU time per decision, latency percentiles and the
 * wall-clock bounds of its measured window, which the script sums over the fleet.
 * <p>
 * {@code java -cp benchmarks/target/benchmarks.jar
 * io.github.ratelimit.benchmarks.localfirst.LocalFirstFleetRun --port 6379 --instance 1
 * --mode local-first --go-file PATH [--seconds 10] [--callers 2] [--sync-ms 10]
 * [--capacity 1000] [--rate 1000] [--identities 1] [--pace-us 0] [--limit hot]
 * [--warmup-ms 1000]}
 */
public final class LocalFirstFleetRun {

	private static final long HIGHEST_NANOS = TimeUnit.SECONDS.toNanos(10);

	private LocalFirstFleetRun() {
	}

	/**
	 * Runs one instance.
	 * @param args options, see the class description
	 * @throws InterruptedException when interrupted while waiting for the callers
	 * @throws IOException when the files agreeing on the start cannot be used
	 */
	public static void main(String[] args) throws InterruptedException, IOException {
		Map<String, String> options = new HashMap<>();
		for (int i = 0; i + 1 < args.length; i += 2) {
			if (!args[i].startsWith("--")) {
				throw new IllegalArgumentException("expected --option value pairs: " + Arrays.toString(args));
			}
			options.put(args[i].substring(2), args[i + 1]);
		}
		String host = options.getOrDefault("host", "127.0.0.1");
		int port = Integer.parseInt(options.get("port"));
		String instance = options.getOrDefault("instance", "1");
		boolean localFirst = !options.getOrDefault("mode", "local-first").equals("exact");
		Path goFile = Path.of(options.get("go-file"));
		long warmUpNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(options.getOrDefault("warmup-ms", "1000")));
		double seconds = Double.parseDouble(options.getOrDefault("seconds", "10"));
		int callers = Integer.parseInt(options.getOrDefault("callers", "2"));
		Duration sync = Duration.ofMillis(Long.parseLong(options.getOrDefault("sync-ms", "10")));
		long capacity = Long.parseLong(options.getOrDefault("capacity", "1000"));
		long rate = Long.parseLong(options.getOrDefault("rate", "1000"));
		int identities = Integer.parseInt(options.getOrDefault("identities", "1"));
		long paceNanos = TimeUnit.MICROSECONDS.toNanos(Long.parseLong(options.getOrDefault("pace-us", "0")));
		RateLimit limit = new RateLimit(options.getOrDefault("limit", "hot"), Algorithm.TOKEN_BUCKET, capacity, rate,
				Duration.ofSeconds(1));
		RateLimit warmUp = new RateLimit("warm-up-" + instance, Algorithm.TOKEN_BUCKET, 1_000_000_000_000L,
				1_000_000_000L, Duration.ofSeconds(1));

		LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(host, port),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).build());
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		RedisRateLimitStore redis = RedisRateLimitStore.builder(connectionFactory)
			.keyPrefix("ratelimit:")
			.timeout(Duration.ofMillis(250))
			.build();
		redis.preload();
		AtomicLong warnings = new AtomicLong();
		LocalFirstRateLimitStore shares = null;
		RateLimitStore store = redis;
		if (localFirst) {
			shares = new LocalFirstRateLimitStore(redis, redis, new LocalFirstSettings(RateLimitClock.system(), sync, (any) -> false, 10_000,
					new ThrottledLog(TimeUnit.SECONDS.toNanos(1), System::nanoTime), (message) -> {
						warnings.incrementAndGet();
						System.err.println(message);
					}));
			shares.start();
			store = shares;
		}

		Caller[] running = new Caller[callers];
		Thread[] threads = new Thread[callers];
		CountDownLatch warmed = new CountDownLatch(callers);
		CountDownLatch go = new CountDownLatch(1);
		long[] startAt = new long[1];
		for (int c = 0; c < callers; c++) {
			running[c] = new Caller(store, limit, warmUp, identities, paceNanos, warmUpNanos, (long) (seconds * 1e9),
					warmed, go, startAt);
			threads[c] = new Thread(running[c], "caller-" + c);
			threads[c].start();
		}
		com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory
			.getOperatingSystemMXBean();
		warmed.await();
		Files.writeString(goFile.resolveSibling(goFile.getFileName() + "." + instance + ".ready"), "");
		while (!Files.exists(goFile) || Files.readString(goFile).isBlank()) {
			Thread.sleep(5);
		}
		long startAtMillis = Long.parseLong(Files.readString(goFile).trim());
		long readyMillis = System.currentTimeMillis();
		startAt[0] = startAtMillis;
		go.countDown();
		sleepUntil(startAtMillis);
		long cpuStart = os.getProcessCpuTime();
		Instant started = Instant.now();
		long startNanos = System.nanoTime();
		for (Thread thread : threads) {
			thread.join();
		}
		long elapsedNanos = System.nanoTime() - startNanos;
		long cpuNanos = os.getProcessCpuTime() - cpuStart;
		Instant ended = started.plusNanos(elapsedNanos);
		if (shares != null) {
			shares.close();
		}
		connectionFactory.destroy();

		long attempts = 0;
		long admitted = 0;
		long errors = 0;
		Histogram latency = new Histogram(HIGHEST_NANOS, 2);
		for (Caller caller : running) {
			attempts += caller.attempts;
			admitted += caller.admitted;
			errors += caller.errors;
			latency.add(caller.latency);
		}
		double elapsed = elapsedNanos / 1e9;
		System.out.printf(Locale.ROOT,
				"instance=%s mode=%s callers=%d attempts=%d admitted=%d seconds=%.3f decisions_per_s=%.0f "
						+ "cpu_ns_per_decision=%.0f p50_us=%.1f p99_us=%.1f p999_us=%.1f start_us=%d end_us=%d "
						+ "warnings=%d errors=%d ready_before_start_ms=%d%n",
				instance, localFirst ? "local-first" : "exact", callers, attempts, admitted, elapsed,
				attempts / elapsed, (double) cpuNanos / Math.max(1, attempts),
				latency.getValueAtPercentile(50) / 1e3, latency.getValueAtPercentile(99) / 1e3,
				latency.getValueAtPercentile(99.9) / 1e3, micros(started), micros(ended), warnings.get(), errors,
				startAtMillis - readyMillis);
	}

	private static long micros(Instant instant) {
		return ChronoUnit.MICROS.between(Instant.EPOCH, instant);
	}

	private static void sleepUntil(long epochMillis) throws InterruptedException {
		long wait = epochMillis - System.currentTimeMillis();
		if (wait > 1) {
			Thread.sleep(wait - 1);
		}
		while (System.currentTimeMillis() < epochMillis) {
			Thread.onSpinWait();
		}
	}

	/** One request thread: warms up until the start instant, then decides for the measured seconds. */
	private static final class Caller implements Runnable {

		final Histogram latency = new Histogram(HIGHEST_NANOS, 2);

		private final RateLimitStore store;

		private final RateLimit limit;

		private final RateLimit warmUp;

		private final int identities;

		private final long paceNanos;

		private final long warmUpNanos;

		private final long durationNanos;

		private final CountDownLatch warmed;

		private final CountDownLatch go;

		/** The start instant, written before {@code go} opens. */
		private final long[] startAt;

		long attempts;

		long admitted;

		long errors;

		Caller(RateLimitStore store, RateLimit limit, RateLimit warmUp, int identities, long paceNanos,
				long warmUpNanos, long durationNanos, CountDownLatch warmed, CountDownLatch go, long[] startAt) {
			this.store = store;
			this.limit = limit;
			this.warmUp = warmUp;
			this.identities = identities;
			this.paceNanos = paceNanos;
			this.warmUpNanos = warmUpNanos;
			this.durationNanos = durationNanos;
			this.warmed = warmed;
			this.go = go;
			this.startAt = startAt;
		}

		@Override
		public void run() {
			MutableDecision decision = new MutableDecision();
			// warm-up: the same paths on a limit nobody else uses
			long warmUpEnd = System.nanoTime() + this.warmUpNanos;
			while (System.nanoTime() < warmUpEnd) {
				decide(this.warmUp, "warm-up", decision);
				pause();
			}
			this.warmed.countDown();
			try {
				this.go.await();
				sleepUntil(this.startAt[0]);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			// only the measured window's failures count
			this.errors = 0;
			ThreadLocalRandom random = ThreadLocalRandom.current();
			long start = System.nanoTime();
			long deadline = start + this.durationNanos;
			long now = start;
			while (now < deadline) {
				String identity = (this.identities == 1) ? "client" : "user-" + random.nextInt(this.identities);
				boolean allowed = decide(this.limit, identity, decision);
				long done = System.nanoTime();
				this.latency.recordValue(Math.min(HIGHEST_NANOS, done - now));
				this.attempts++;
				if (allowed) {
					this.admitted++;
				}
				pause();
				now = (this.paceNanos > 0) ? System.nanoTime() : done;
			}
		}

		/** Decides one request; a store that fails counts as an error and rejects, as a failing-closed limit does. */
		private boolean decide(RateLimit decided, String identity, MutableDecision decision) {
			try {
				return this.store.tryAcquire(decided, identity, 1, 0, decision);
			}
			catch (RuntimeException ex) {
				this.errors++;
				return false;
			}
		}

		private void pause() {
			if (this.paceNanos > 0) {
				LockSupport.parkNanos(this.paceNanos);
			}
		}

	}

}
