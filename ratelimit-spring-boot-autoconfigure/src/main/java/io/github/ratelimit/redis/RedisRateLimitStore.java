package io.github.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.core.Acquisition;
import io.github.ratelimit.core.AlgorithmSpec;
import io.github.ratelimit.core.BucketSnapshot;
import io.github.ratelimit.core.RateLimit;
import io.github.ratelimit.core.RateLimitClock;
import io.github.ratelimit.core.RateLimitDecision;
import io.github.ratelimit.core.RateLimitResult;
import io.github.ratelimit.core.RateLimitStore;

/**
 * Buckets in Redis, decided atomically by one Lua script per call (EVALSHA, falling back
 * to EVAL when the server lost its script cache). Time comes from Redis {@code TIME}, so
 * application clocks may disagree, unless a clock is given (tests).
 * <p>
 * Keys are {@code <prefix>{<identity>}:<limit name>}: the identity is the hash tag, so in
 * a Redis Cluster the buckets of different identities spread over the slots while every
 * limit of one identity shares one slot and one call. Route templates contain braces too,
 * but Redis only reads the first pair, which is always the identity's. When the limits of
 * a request fall into several slots, the slots are decided one after another with one
 * timestamp, and those already consumed are refunded if a later one rejects.
 */
public final class RedisRateLimitStore implements RateLimitStore {

	/** Least TTL of keys written at an explicit time (tests), whatever their state needs. */
	private static final String TEST_MIN_TTL_MILLIS = "60000";

	/** Default key prefix. */
	public static final String DEFAULT_KEY_PREFIX = "ratelimit:";

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> SCRIPT = RedisScripts.acquire();

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> INSPECT = RedisScripts.inspect();

	private final ScriptExecutor executor;

	private final StringRedisTemplate template;

	private final String keyPrefix;

	private final RateLimitClock clock;

	private final boolean cluster;

	/**
	 * Creates a store deciding on Redis time.
	 * @param connectionFactory the application's connection factory
	 * @param keyPrefix prefix of every key
	 */
	public RedisRateLimitStore(RedisConnectionFactory connectionFactory, String keyPrefix) {
		this(connectionFactory, keyPrefix, null);
	}

	/**
	 * Creates a store.
	 * @param connectionFactory the application's connection factory
	 * @param keyPrefix prefix of every key
	 * @param clock the clock to decide at, or {@code null} to use Redis {@code TIME}
	 */
	public RedisRateLimitStore(RedisConnectionFactory connectionFactory, String keyPrefix, RateLimitClock clock) {
		this(connectionFactory, keyPrefix, clock, null);
	}

	/**
	 * Creates a store whose calls take at most {@code timeout}.
	 * @param connectionFactory the application's connection factory
	 * @param keyPrefix prefix of every key
	 * @param clock the clock to decide at, or {@code null} to use Redis {@code TIME}
	 * @param timeout longest wait for Redis per call, or {@code null} for the connection's
	 * own command timeout; applied with Lettuce, whose commands run asynchronously
	 */
	public RedisRateLimitStore(RedisConnectionFactory connectionFactory, String keyPrefix, RateLimitClock clock,
			Duration timeout) {
		if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
			throw new IllegalArgumentException("key prefix must not contain braces: " + keyPrefix);
		}
		this.template = new StringRedisTemplate(connectionFactory);
		this.executor = (connectionFactory instanceof LettuceConnectionFactory lettuce && timeout != null)
				? new LettuceScriptExecutor(lettuce, SCRIPT, timeout) : new TemplateScriptExecutor(this.template, SCRIPT);
		this.keyPrefix = keyPrefix;
		this.clock = clock;
		this.cluster = isCluster(connectionFactory);
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (acquisitions.isEmpty()) {
			// no script runs, so there is no Redis time to report (parsing "" would throw)
			return new RateLimitResult(List.of(), (this.clock != null) ? this.clock.nowMicros() : 0, RateLimitResult.REDIS);
		}
		RateLimitStore.requireDistinct(acquisitions);
		Map<Integer, List<Integer>> groups = groupBySlot(acquisitions);
		RateLimitDecision[] decisions = new RateLimitDecision[acquisitions.size()];
		String now = (this.clock != null) ? Long.toString(this.clock.nowMicros()) : "";
		if (groups.size() == 1) {
			long timestamp = run(acquisitions, groups.values().iterator().next(), now, "acquire", maxDelayMicros,
					decisions);
			return new RateLimitResult(uncommittedUnlessAllAllowed(acquisitions, decisions), timestamp,
					RateLimitResult.REDIS);
		}
		List<List<Integer>> consumed = new ArrayList<>();
		boolean allowed = true;
		try {
			for (List<Integer> group : groups.values()) {
				long timestamp = run(acquisitions, group, now, allowed ? "acquire" : "check", maxDelayMicros,
						decisions);
				now = Long.toString(timestamp);
				boolean groupAllowed = group.stream().noneMatch((i) -> decisions[i].rejects());
				if (allowed && groupAllowed) {
					// only what was taken is given back: a shadow limit that rejected took nothing
					consumed.add(group.stream().filter((i) -> decisions[i].allowed()).toList());
				}
				allowed &= groupAllowed;
			}
		}
		catch (RuntimeException ex) {
			// a later slot failed: give back what the earlier ones took, then let the fallback decide
			refundQuietly(acquisitions, consumed, now);
			throw ex;
		}
		if (!allowed) {
			for (List<Integer> group : consumed) {
				if (!group.isEmpty()) {
					run(acquisitions, group, now, "refund", 0, null);
				}
			}
		}
		return new RateLimitResult(uncommittedUnlessAllAllowed(acquisitions, decisions), Long.parseLong(now),
				RateLimitResult.REDIS);
	}

	private void refundQuietly(List<Acquisition> acquisitions, List<List<Integer>> consumed, String now) {
		for (List<Integer> group : consumed) {
			try {
				if (!group.isEmpty()) {
					run(acquisitions, group, now, "refund", 0, null);
				}
			}
			catch (RuntimeException ignored) {
				// the store is failing: the fallback decides, and the key expires on its own
			}
		}
	}

	/** When one limit rejects, the others consumed nothing: report the quota they still hold. */
	private static List<RateLimitDecision> uncommittedUnlessAllAllowed(List<Acquisition> acquisitions,
			RateLimitDecision[] decisions) {
		boolean allowed = true;
		for (RateLimitDecision decision : decisions) {
			allowed &= !decision.rejects();
		}
		if (!allowed) {
			for (int i = 0; i < decisions.length; i++) {
				decisions[i] = decisions[i].uncommitted(acquisitions.get(i).cost());
			}
		}
		return List.of(decisions);
	}

	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		for (List<Integer> group : groupBySlot(acquisitions).values()) {
			run(acquisitions, group, Long.toString(decided.timestampMicros()), "refund", 0, null);
		}
	}

	@Override
	public String name() {
		return RateLimitResult.REDIS;
	}

	@Override
	public BucketSnapshot inspect(RateLimit limit, String identity) {
		AlgorithmSpec spec = AlgorithmSpec.of(limit.algorithm());
		List<String> keys = keys(spec, key(limit, identity));
		String now = (this.clock != null) ? Long.toString(this.clock.nowMicros()) : "";
		List<?> reply = this.template.execute(INSPECT, keys, now, "1", spec.redisCode(),
				Long.toString(limit.capacity()), Long.toString(spec.redisParameter(limit)));
		if (reply == null || reply.size() < 6) {
			throw new IllegalStateException("Rate limit inspect script returned no reply");
		}
		RateLimitDecision probe = new RateLimitDecision(limit, number(reply, 2) == 1, number(reply, 3),
				number(reply, 4), number(reply, 5), 0);
		return BucketSnapshot.of(probe, identity, number(reply, 1) == 1, RateLimitResult.REDIS);
	}

	/** Deletes the bucket's keys, which share the identity's hash tag and so one slot. */
	@Override
	public boolean reset(RateLimit limit, String identity) {
		Long deleted = this.template.delete(keys(AlgorithmSpec.of(limit.algorithm()), key(limit, identity)));
		return deleted != null && deleted > 0;
	}

	/**
	 * Connects and loads the script ahead of the first request, so that the first request
	 * does not pay for the connection and the script upload within its timeout.
	 */
	public void preload() {
		this.template.execute((RedisCallback<Object>) (connection) -> {
			connection.scriptingCommands().scriptLoad(SCRIPT.getScriptAsString().getBytes(StandardCharsets.UTF_8));
			return null;
		});
	}

	/**
	 * The key holding the state of a bucket (an algorithm whose bucket takes several keys
	 * uses this key followed by each {@link AlgorithmSpec#redisKeySuffixes() suffix}).
	 * @param acquisition the acquisition
	 * @return the key
	 */
	public String key(Acquisition acquisition) {
		return key(acquisition.limit(), acquisition.identity());
	}

	private String key(RateLimit limit, String identity) {
		return this.keyPrefix + "{" + escape(identity) + "}:" + limit.name();
	}

	/** Runs the script for some acquisitions of one slot; fills their decisions, returns the time used. */
	private long run(List<Acquisition> acquisitions, List<Integer> group, String now, String mode, long maxDelayMicros,
			RateLimitDecision[] decisions) {
		List<String> keys = new ArrayList<>(group.size() + 1);
		List<String> args = new ArrayList<>(3 + group.size() * 4);
		args.add(now);
		args.add(mode);
		args.add(Integer.toString(group.size()));
		for (int i : group) {
			Acquisition acquisition = acquisitions.get(i);
			RateLimit limit = acquisition.limit();
			AlgorithmSpec spec = AlgorithmSpec.of(limit.algorithm());
			keys.addAll(keys(spec, key(acquisition)));
			args.add(limit.shadow() ? spec.redisCode() + "!" : spec.redisCode());
			args.add(Long.toString(limit.capacity()));
			args.add(Long.toString(spec.redisParameter(limit)));
			args.add(Long.toString(acquisition.cost()));
		}
		if (this.clock != null) {
			// the test clock stands still while Redis expires keys in real time
			args.add(TEST_MIN_TTL_MILLIS);
		}
		else if (maxDelayMicros > 0) {
			args.add("");
		}
		if (maxDelayMicros > 0) {
			args.add(Long.toString(maxDelayMicros));
		}
		List<?> reply = this.executor.execute(keys, args);
		if (reply == null || reply.isEmpty()) {
			throw new IllegalStateException("Rate limit script returned no reply");
		}
		if (decisions != null) {
			for (int g = 0; g < group.size(); g++) {
				int base = 1 + g * 5;
				RateLimit limit = acquisitions.get(group.get(g)).limit();
				decisions[group.get(g)] = new RateLimitDecision(limit, number(reply, base) == 1,
						number(reply, base + 1), number(reply, base + 2), number(reply, base + 3),
						number(reply, base + 4));
			}
		}
		return number(reply, 0);
	}

	private Map<Integer, List<Integer>> groupBySlot(List<Acquisition> acquisitions) {
		Map<Integer, List<Integer>> groups = new LinkedHashMap<>();
		for (int i = 0; i < acquisitions.size(); i++) {
			int slot = this.cluster ? SlotHash.getSlot(key(acquisitions.get(i))) : 0;
			groups.computeIfAbsent(slot, (s) -> new ArrayList<>(2)).add(i);
		}
		return groups;
	}

	/** Runs the composed script. */
	private interface ScriptExecutor {

		List<?> execute(List<String> keys, List<String> args);

	}

	/** Through Spring Data Redis: EVALSHA with EVAL fallback, bounded by the connection's timeout. */
	private record TemplateScriptExecutor(StringRedisTemplate redis,
			@SuppressWarnings("rawtypes") RedisScript<List> script) implements ScriptExecutor {

		@Override
		public List<?> execute(List<String> keys, List<String> args) {
			return this.redis.execute(this.script, keys, args.toArray());
		}

	}

	/**
	 * Through Lettuce's asynchronous API on the application's shared connection, so that
	 * each call waits at most the configured timeout whatever the connection's command
	 * timeout is. EVALSHA first; EVAL when the server lost the script. The factory opens
	 * its shared connection on first use and blocks while it does (up to the connect and
	 * command timeouts, 60 seconds by default, when Redis hangs); that first connection is
	 * therefore opened on a thread of its own, and calls wait for it within their timeout.
	 */
	private static final class LettuceScriptExecutor implements ScriptExecutor {

		private final LettuceConnectionFactory connectionFactory;

		private final String sha;

		private final byte[] script;

		private final long timeoutNanos;

		private final AtomicReference<CompletableFuture<Void>> firstConnection = new AtomicReference<>();

		private volatile boolean connected;

		@SuppressWarnings("rawtypes")
		LettuceScriptExecutor(LettuceConnectionFactory connectionFactory, RedisScript<List> script, Duration timeout) {
			this.connectionFactory = connectionFactory;
			this.sha = script.getSha1();
			this.script = script.getScriptAsString().getBytes(StandardCharsets.UTF_8);
			this.timeoutNanos = timeout.toNanos();
		}

		@Override
		@SuppressWarnings("unchecked")
		public List<?> execute(List<String> keys, List<String> args) {
			byte[][] keyBytes = bytes(keys);
			byte[][] argBytes = bytes(args);
			long deadline = System.nanoTime() + this.timeoutNanos;
			awaitFirstConnection(deadline);
			try (RedisConnection connection = this.connectionFactory.getConnection()) {
				RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) connection
					.getNativeConnection();
				try {
					return await(commands.evalsha(this.sha, ScriptOutputType.MULTI, keyBytes, argBytes), deadline);
				}
				catch (RedisNoScriptException ex) {
					return await(commands.eval(this.script, ScriptOutputType.MULTI, keyBytes, argBytes), deadline);
				}
			}
		}

		private void awaitFirstConnection(long deadline) {
			if (this.connected) {
				return;
			}
			CompletableFuture<Void> attempt = this.firstConnection.get();
			if (attempt == null || attempt.isCompletedExceptionally()) {
				CompletableFuture<Void> next = new CompletableFuture<>();
				if (this.firstConnection.compareAndSet(attempt, next)) {
					Thread connector = new Thread(() -> {
						try (RedisConnection connection = this.connectionFactory.getConnection()) {
							next.complete(null);
						}
						catch (Throwable ex) {
							// whatever it is, the calls waiting for it must learn of it
							next.completeExceptionally(ex);
						}
					}, "ratelimit-redis-connect");
					connector.setDaemon(true);
					connector.start();
				}
				attempt = this.firstConnection.get();
			}
			try {
				attempt.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
				this.connected = true;
			}
			catch (TimeoutException ex) {
				throw new QueryTimeoutException("Redis did not accept a connection in time", ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new QueryTimeoutException("Interrupted while connecting to Redis", ex);
			}
			catch (ExecutionException ex) {
				throw new RedisSystemException("Could not connect to Redis: " + ex.getCause().getMessage(),
						ex.getCause());
			}
		}

		private static List<?> await(RedisFuture<List<Object>> future, long deadline) {
			try {
				return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
			catch (TimeoutException ex) {
				future.cancel(true);
				throw new QueryTimeoutException("Redis did not answer the rate limit script in time", ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				future.cancel(true);
				throw new QueryTimeoutException("Interrupted while waiting for Redis", ex);
			}
			catch (ExecutionException ex) {
				if (ex.getCause() instanceof RedisNoScriptException noScript) {
					throw noScript;
				}
				throw new RedisSystemException("Rate limit script failed: " + ex.getCause().getMessage(), ex.getCause());
			}
		}

		private static byte[][] bytes(List<String> values) {
			byte[][] bytes = new byte[values.size()][];
			for (int i = 0; i < bytes.length; i++) {
				bytes[i] = values.get(i).getBytes(StandardCharsets.UTF_8);
			}
			return bytes;
		}

	}

	private static long number(List<?> reply, int index) {
		return ((Number) reply.get(index)).longValue();
	}

	private static boolean isCluster(RedisConnectionFactory connectionFactory) {
		if (connectionFactory instanceof LettuceConnectionFactory lettuce) {
			return lettuce.isClusterAware();
		}
		return false;
	}

	/** Every key of one bucket, all in the slot of its first. */
	private static List<String> keys(AlgorithmSpec spec, String key) {
		List<String> suffixes = spec.redisKeySuffixes();
		if (suffixes.size() == 1) {
			return List.of(key);
		}
		List<String> keys = new ArrayList<>(suffixes.size());
		for (String suffix : suffixes) {
			keys.add(key + suffix);
		}
		return keys;
	}

	/** Keeps identities from other stores from opening a hash tag of their own. */
	private static String escape(String identity) {
		if (identity.indexOf('{') < 0 && identity.indexOf('}') < 0 && identity.indexOf('%') < 0) {
			return identity;
		}
		return identity.replace("%", "%25").replace("{", "%7B").replace("}", "%7D");
	}

}
