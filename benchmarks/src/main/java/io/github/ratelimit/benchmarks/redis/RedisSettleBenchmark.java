package io.github.ratelimit.benchmarks.redis;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.RateLimiter;
import io.github.ratelimit.internal.redis.RedisRateLimitStore;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;

/**
 * Reserve-then-settle against a plain decision on Redis, through {@link RateLimiter} over
 * the Redis store: the time per call and the Redis commands it sends, counted by a Lettuce
 * listener and printed per benchmark when its trial ends ({@code redis commands per call}).
 * A plain decision sends one script call; reserving and settling at another cost two; settling
 * at the reservation one, since the limiter leaves that settlement out. One call limits
 * requests, a token bucket and a window of tokens at once.
 * <p>
 * The benchmark starts its own {@code redis-server} (from the {@code PATH}) on a free
 * loopback port, without persistence, and stops it when the trial ends.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RedisSettleBenchmark {

	private static final long ESTIMATE = 100;

	private static final long ACTUAL = 37;

	private Process server;

	private LettuceConnectionFactory connectionFactory;

	private RateLimiter limiter;

	private RateLimit requests;

	private RateLimit tokens;

	private RateLimit window;

	private final LongAdder sent = new LongAdder();

	private final LongAdder calls = new LongAdder();

	@Setup(Level.Trial)
	public void setUp() throws Exception {
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		this.server = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
				"--save", "", "--appendonly", "no")
			.redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.DISCARD)
			.start();
		this.connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).build());
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.connectionFactory.getRequiredNativeClient().addListener(new CommandListener() {
			@Override
			public void commandStarted(CommandStartedEvent event) {
				RedisSettleBenchmark.this.sent.increment();
			}
		});
		RedisRateLimitStore store = RedisRateLimitStore.builder(this.connectionFactory)
			.timeout(Duration.ofSeconds(1))
			.build();
		awaitServer(store);
		store.preload();
		this.limiter = new RateLimiter(store);
		this.requests = new RateLimit("requests", Algorithm.TOKEN_BUCKET, 1_000_000_000_000L, 1_000_000_000L,
				Duration.ofSeconds(1));
		this.tokens = new RateLimit("tokens", Algorithm.TOKEN_BUCKET, 1_000_000_000_000L, 1_000_000_000L,
				Duration.ofSeconds(1));
		this.window = RateLimit.of("tokens-window", Algorithm.FIXED_WINDOW, 8_000_000_000L, Duration.ofSeconds(1));
	}

	/** Waits, a bounded number of times, for the server to answer. */
	private void awaitServer(RedisRateLimitStore store) throws InterruptedException {
		for (int attempt = 0;; attempt++) {
			try {
				store.preload();
				return;
			}
			catch (RuntimeException ex) {
				if (attempt == 100) {
					throw ex;
				}
				Thread.sleep(50);
			}
		}
	}

	/** Counts only what the measured calls send. */
	@Setup(Level.Iteration)
	public void resetCounts() {
		this.sent.reset();
		this.calls.reset();
	}

	@TearDown(Level.Iteration)
	public void reportCounts() {
		System.out.printf(Locale.ROOT, "%nredis commands per call: %.3f (%d calls)%n",
				(double) this.sent.sum() / Math.max(1, this.calls.sum()), this.calls.sum());
	}

	@TearDown(Level.Trial)
	public void tearDown() throws InterruptedException {
		this.connectionFactory.destroy();
		this.server.destroy();
		if (!this.server.waitFor(10, TimeUnit.SECONDS)) {
			this.server.destroyForcibly();
		}
	}

	private List<Acquisition> reservation() {
		return List.of(new Acquisition(this.requests, "tenant", 1), new Acquisition(this.tokens, "tenant", ESTIMATE),
				new Acquisition(this.window, "tenant", ESTIMATE));
	}

	private boolean admitted(RateLimitResult decided) {
		this.calls.increment();
		if (!decided.allowed()) {
			throw new IllegalStateException("a limit no run can exhaust rejected: " + decided);
		}
		return true;
	}

	@Benchmark
	public boolean decide() {
		return admitted(this.limiter.acquire(reservation()));
	}

	@Benchmark
	public boolean reserveSettle() {
		List<Acquisition> reserved = reservation();
		RateLimitResult decided = this.limiter.acquire(reserved);
		this.limiter.settle(reserved, decided, new long[] { 1, ACTUAL, ACTUAL });
		return admitted(decided);
	}

	@Benchmark
	public boolean reserveSettleExact() {
		List<Acquisition> reserved = reservation();
		RateLimitResult decided = this.limiter.acquire(reserved);
		this.limiter.settle(reserved, decided, new long[] { 1, ESTIMATE, ESTIMATE });
		return admitted(decided);
	}

}
