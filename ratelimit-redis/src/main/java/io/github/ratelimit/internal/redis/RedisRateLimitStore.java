package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.internal.core.ShareRequest;
import io.github.ratelimit.internal.core.ShareGrant;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.internal.redis.ScriptArguments.Invocation;
import io.github.ratelimit.internal.redis.ScriptArguments.Mode;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Buckets in Redis, decided atomically by one Lua script per call: a Redis function
 * (FCALL) where the server runs them and the store calls through Lettuce with a timeout
 * ({@link LettuceScriptExecutor}), else EVALSHA, falling back to EVAL when the server lost
 * its script cache. Time comes from Redis {@code TIME}, so application clocks may
 * disagree, unless a clock is given (tests). Made with {@link #builder}.
 * <p>
 * A call that takes (an acquisition, a lease) carries a deadline on Redis's clock, the
 * moment the store stops waiting for it ({@link RedisDeadlines}), and a script Redis runs
 * later, after a stall, changes nothing: the fallback has decided its request meanwhile.
 * Refunds carry none. Only a store with a timeout of its own, on Lettuce and Redis time,
 * knows when it stops waiting.
 * <p>
 * Keys are {@code <prefix>{<identity>}:<limit id>}, the limit's {@link RateLimit#id() id}
 * being eight characters derived from its name ({@link BucketKeys}): the identity is the
 * hash tag, so in a Redis Cluster the buckets of different identities spread over the
 * slots while every limit of one identity shares one slot and one call. When the limits of
 * a request fall into several slots, the slots are decided one after another with one
 * timestamp, and those already consumed are refunded if a later one rejects
 * ({@link SlotSequence}).
 * <p>
 * For a calendar quota the store sends the boundaries of the windows around the
 * application's present ({@link EncodedLimit}); application and Redis clocks may thus
 * differ by up to a whole window; a Redis time outside the windows sent fails the call,
 * which the fail mode then answers.
 * <p>
 * Asynchronous calls that cannot be sent without waiting run on a pool of the store's own,
 * which {@link #close()} shuts down.
 */
public final class RedisRateLimitStore implements RateLimitStore, ShareStore, AutoCloseable {

	/** Default key prefix. */
	public static final String DEFAULT_KEY_PREFIX = "ratelimit:";

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> INSPECT = RedisScripts.inspect();

	private final StringRedisTemplate template;

	private final String keyPrefix;

	private final ScriptArguments arguments;

	private final SlotPlanner slots;

	private final CallFactory calls;

	private final ScriptRunner runner;

	private final SlotSequence sequence;

	private final LettuceScriptExecutor lettuce;

	private final AsyncOffload offload = new AsyncOffload("ratelimit-redis-async");

	private RedisRateLimitStore(Builder builder) {
		RedisConnectionFactory connectionFactory = builder.connectionFactory;
		this.template = new StringRedisTemplate(connectionFactory);
		this.keyPrefix = builder.keyPrefix;
		this.lettuce = (connectionFactory instanceof LettuceConnectionFactory factory && builder.timeout != null)
				? new LettuceScriptExecutor(factory, builder.timeout, builder.functions, this.offload) : null;
		ScriptExecutor executor = (this.lettuce != null) ? this.lettuce : new TemplateScriptExecutor(this.template);
		this.slots = new SlotPlanner(
				connectionFactory instanceof LettuceConnectionFactory factory && factory.isClusterAware());
		// a deadline is the time the caller stops waiting, on Redis's clock: known with a
		// timeout of the store's own, and comparable when the store decides on Redis time
		RedisDeadlines deadlines = (this.lettuce != null && builder.clock == null)
				? new RedisDeadlines(builder.timeout.toNanos(), this.slots.cluster()) : null;
		this.arguments = new ScriptArguments(deadlines, builder.clock, this.slots);
		this.calls = new CallFactory(new EncodedLimits(builder.layout), this.keyPrefix);
		this.runner = new ScriptRunner(executor, this.arguments, deadlines, this.offload);
		this.sequence = new SlotSequence(this.runner, this.arguments, this.slots, this.calls);
	}

	/**
	 * Starts a store over the application's connection factory.
	 * @param connectionFactory the application's connection factory
	 * @return a builder, set to decide on Redis time under {@link #DEFAULT_KEY_PREFIX}
	 * with the connection's own timeout
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory) {
		return new Builder(connectionFactory);
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (acquisitions.isEmpty()) {
			// no script runs, so there is no Redis time to report (parsing "" would throw)
			long now = this.arguments.now();
			return new RateLimitResult(List.of(), (now != ScriptArguments.NOW_FROM_REDIS) ? now : 0,
					RateLimitResult.REDIS);
		}
		RateLimitStore.requireDistinct(acquisitions);
		ScriptCall call = this.calls.acquisitions(acquisitions);
		return this.sequence.acquire(call, this.slots.groups(call), maxDelayMicros);
	}

	/**
	 * Decides without holding the calling thread while Redis works: the script is sent
	 * through Lettuce's asynchronous API and the result completes when its reply arrives
	 * (or fails after {@code ratelimit.redis.timeout}). A request whose limits span several
	 * Cluster slots, which are decided one after another, and a connection factory that is
	 * not Lettuce's, are decided on a pool thread instead, never on the caller's.
	 */
	@Override
	public CompletionStage<RateLimitResult> tryAcquireAsync(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (acquisitions.isEmpty()) {
			return CompletableFuture.completedFuture(tryAcquire(acquisitions, maxDelayMicros));
		}
		ScriptCall call;
		List<int[]> groups;
		try {
			RateLimitStore.requireDistinct(acquisitions);
			call = this.calls.acquisitions(acquisitions);
			groups = this.slots.groups(call);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (groups.size() != 1 || !this.runner.sendsAsync()) {
			return this.runner.offload(() -> this.sequence.acquire(call, groups, maxDelayMicros));
		}
		int[] group = groups.get(0);
		Invocation invocation = this.arguments.prepare(call, group, this.arguments.now(), Mode.ACQUIRE,
				maxDelayMicros);
		return this.runner.send(invocation, (reply) -> ScriptReplies.decided(reply, call, group));
	}

	/**
	 * Decides the costs and grants the extras as shares in one script call. Shares whose keys span
	 * several Cluster slots are decided exactly, one slot after another, and lease
	 * nothing; their costs must then be positive.
	 */
	@Override
	public ShareGrant grant(List<ShareRequest> leases) {
		ScriptCall call = this.calls.leases(leases);
		List<int[]> groups = this.slots.groups(call);
		if (groups.size() != 1) {
			return this.sequence.leaseAcrossSlots(leases);
		}
		Invocation invocation = this.arguments.prepare(call, groups.get(0), this.arguments.now(), Mode.LEASE, 0,
				CallFactory.extras(leases));
		return ScriptReplies.leased(this.runner.execute(invocation), call, groups.get(0));
	}

	/**
	 * Grants like {@link #grant} through Lettuce's asynchronous API, so that the calls of a
	 * sync go out together on the shared connection (pipelined); leases spanning several
	 * slots, and a factory that is not Lettuce's, are leased on a pool thread.
	 */
	@Override
	public CompletionStage<ShareGrant> grantAsync(List<ShareRequest> leases) {
		ScriptCall call;
		List<int[]> groups;
		try {
			call = this.calls.leases(leases);
			groups = this.slots.groups(call);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (groups.size() != 1 || !this.runner.sendsAsync()) {
			return this.runner.offload(() -> grant(leases));
		}
		Invocation invocation = this.arguments.prepare(call, groups.get(0), this.arguments.now(), Mode.LEASE, 0,
				CallFactory.extras(leases));
		return this.runner.send(invocation, (reply) -> ScriptReplies.leased(reply, call, groups.get(0)));
	}

	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		this.sequence.refund(this.calls.acquisitions(acquisitions), decided.timestampMicros());
	}

	/**
	 * Gives back through Lettuce's asynchronous API, as {@link #tryAcquireAsync} decides;
	 * refunds spanning several Cluster slots, and a factory that is not Lettuce's, run on
	 * a pool thread.
	 */
	@Override
	public CompletionStage<Void> refundAsync(List<Acquisition> acquisitions, RateLimitResult decided) {
		ScriptCall call;
		List<int[]> groups;
		try {
			call = this.calls.acquisitions(acquisitions);
			groups = this.slots.groups(call);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (groups.size() != 1 || !this.runner.sendsAsync()) {
			return this.runner.offload(() -> refund(acquisitions, decided));
		}
		Invocation invocation = this.arguments.prepare(call, groups.get(0), decided.timestampMicros(), Mode.REFUND,
				0);
		return this.runner.send(invocation, (reply) -> {
			ScriptReplies.parse(reply, call, groups.get(0), null);
			return null;
		});
	}

	/**
	 * Settles in one script call per Cluster slot (one call outside a Cluster, and for the
	 * limits of one identity, whose keys share a slot): gives back at the time the
	 * reservation was decided, charges at Redis time.
	 */
	@Override
	public void settle(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
		RateLimitStore.requireSettleable(reserved, actualCosts);
		if (!reserved.isEmpty()) {
			this.sequence.settle(this.calls.acquisitions(reserved), decided.timestampMicros(), actualCosts.clone());
		}
	}

	/**
	 * Settles through Lettuce's asynchronous API, as {@link #refundAsync} gives back;
	 * settlements spanning several Cluster slots, and a factory that is not Lettuce's, run
	 * on a pool thread.
	 */
	@Override
	public CompletionStage<Void> settleAsync(List<Acquisition> reserved, RateLimitResult decided,
			long[] actualCosts) {
		ScriptCall call;
		List<int[]> groups;
		long[] actual = actualCosts.clone();
		try {
			RateLimitStore.requireSettleable(reserved, actual);
			if (reserved.isEmpty()) {
				return CompletableFuture.completedFuture(null);
			}
			call = this.calls.acquisitions(reserved);
			groups = this.slots.groups(call);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (groups.size() != 1 || !this.runner.sendsAsync()) {
			return this.runner.offload(() -> this.sequence.settle(call, decided.timestampMicros(), actual));
		}
		Invocation invocation = this.arguments.settle(call, groups.get(0), this.arguments.now(),
				decided.timestampMicros(), actual);
		return this.runner.send(invocation, (reply) -> {
			ScriptReplies.parse(reply, call, groups.get(0), null);
			return null;
		});
	}

	@Override
	public String name() {
		return RateLimitResult.REDIS;
	}

	@Override
	public BucketSnapshot inspect(RateLimit limit, String identity) {
		AlgorithmSpec spec = AlgorithmSpec.of(limit.algorithm());
		EncodedLimit encoded = this.calls.encoded(limit);
		List<String> keys = BucketKeys.keys(spec, this.calls.key(encoded, identity));
		long now = this.arguments.now();
		List<?> reply = this.template.execute(INSPECT, keys,
				(now != ScriptArguments.NOW_FROM_REDIS) ? Long.toString(now) : "", "1", spec.redisCode(),
				Long.toString(limit.capacity()),
				new String(encoded.parameter(this.arguments.applicationClock()), StandardCharsets.US_ASCII),
				encoded.hashed ? identity : "");
		if (reply == null || reply.size() < 6) {
			throw new IllegalStateException("Rate limit inspect script returned no reply");
		}
		long reset = ScriptReplies.number(reply, 4);
		RateLimitDecision probe = new RateLimitDecision(limit, ScriptReplies.number(reply, 2) == 1,
				ScriptReplies.number(reply, 3), reset, ScriptReplies.number(reply, 5), 0,
				encoded.windowMicros(ScriptReplies.number(reply, 0), reset));
		return BucketSnapshot.of(probe, identity, ScriptReplies.number(reply, 1) == 1, RateLimitResult.REDIS);
	}

	/**
	 * Deletes the bucket's keys, which share the identity's hash tag and so one slot, or
	 * its field of the hash it is kept in.
	 */
	@Override
	public boolean reset(RateLimit limit, String identity) {
		EncodedLimit encoded = this.calls.encoded(limit);
		String key = this.calls.key(encoded, identity);
		Long deleted = encoded.hashed ? this.template.opsForHash().delete(key, identity)
				: this.template.delete(BucketKeys.keys(AlgorithmSpec.of(limit.algorithm()), key));
		return deleted != null && deleted > 0;
	}

	/**
	 * Deletes every key under this store's prefix, found with {@code KEYS} (on every
	 * master of a Cluster): meant for tests, since {@code KEYS} holds the server while it
	 * looks through all its keys.
	 */
	@Override
	public void resetAll() {
		Set<String> keys = this.template.keys(BucketKeys.allUnder(this.keyPrefix));
		if (keys != null && !keys.isEmpty()) {
			this.template.delete(keys);
		}
	}

	/**
	 * Connects and loads the scripts ahead of the first request, so that the first request
	 * does not pay for the connection and the script upload within its timeout: the
	 * scripts of requests whose limits share one algorithm (other combinations are loaded
	 * when first used), and where they run as Redis functions, their libraries. Reads Redis
	 * {@code TIME} too, so that the first calls already carry a deadline.
	 */
	public void preload() {
		List<Script> scripts = Script.singleAlgorithms();
		this.template.execute((RedisCallback<Object>) (connection) -> {
			if (this.runner.hasDeadlines()) {
				long sent = System.nanoTime();
				Long time = connection.serverCommands().time(TimeUnit.MICROSECONDS);
				if (time != null) {
					this.runner.observeTime(sent, System.nanoTime(), time);
				}
			}
			for (Script script : scripts) {
				connection.scriptingCommands().scriptLoad(script.bytes());
			}
			return null;
		});
		if (this.lettuce != null) {
			this.lettuce.preload(scripts);
		}
	}

	/**
	 * The key holding the state of a bucket (an algorithm whose bucket takes several keys
	 * uses this key followed by each {@link AlgorithmSpec#redisKeySuffixes() suffix}), or
	 * the hash it is a {@link #field(Acquisition) field} of.
	 * @param acquisition the acquisition
	 * @return the key
	 */
	public String key(Acquisition acquisition) {
		return this.calls.key(this.calls.encoded(acquisition.limit()), acquisition.identity());
	}

	/**
	 * The field holding the state of a bucket kept in a hash (the
	 * {@link RedisKeyLayout#HASH_PER_SLOT hash-per-slot} layout), which is its identity.
	 * @param acquisition the acquisition
	 * @return the field, or {@code null} when the bucket is a key of its own
	 */
	public String field(Acquisition acquisition) {
		return this.calls.encoded(acquisition.limit()).hashed ? acquisition.identity() : null;
	}

	/**
	 * Shuts down the store's pool: the calls running finish, later asynchronous calls
	 * that would need the pool fail. Closing twice does nothing more.
	 */
	@Override
	public void close() {
		this.offload.close();
	}

	/** Settings of a {@link RedisRateLimitStore}, each with a default. */
	public static final class Builder {

		private final RedisConnectionFactory connectionFactory;

		private String keyPrefix = DEFAULT_KEY_PREFIX;

		private RateLimitClock clock;

		private Duration timeout;

		private RedisKeyLayout layout = RedisKeyLayout.KEY_PER_BUCKET;

		private boolean functions = true;

		private Builder(RedisConnectionFactory connectionFactory) {
			this.connectionFactory = Objects.requireNonNull(connectionFactory, "connectionFactory must not be null");
		}

		/**
		 * Sets the prefix of every key; {@link #DEFAULT_KEY_PREFIX} by default.
		 * @param keyPrefix the prefix, without braces
		 * @return this builder
		 */
		public Builder keyPrefix(String keyPrefix) {
			Objects.requireNonNull(keyPrefix, "keyPrefix must not be null");
			if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
				throw new IllegalArgumentException("key prefix must not contain braces: " + keyPrefix);
			}
			this.keyPrefix = keyPrefix;
			return this;
		}

		/**
		 * Sets the clock the store decides at (tests); by default Redis {@code TIME}.
		 * @param clock the clock, or {@code null} for Redis {@code TIME}
		 * @return this builder
		 */
		public Builder clock(RateLimitClock clock) {
			this.clock = clock;
			return this;
		}

		/**
		 * Sets the longest wait for Redis per call, applied with Lettuce, whose commands
		 * run asynchronously; by default the connection's own command timeout.
		 * @param timeout the timeout, or {@code null} for the connection's own
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
				throw new IllegalArgumentException("timeout must be positive: " + timeout);
			}
			this.timeout = timeout;
			return this;
		}

		/**
		 * Sets how buckets map to keys; {@link RedisKeyLayout#KEY_PER_BUCKET} by default.
		 * @param layout the layout
		 * @return this builder
		 */
		public Builder layout(RedisKeyLayout layout) {
			this.layout = Objects.requireNonNull(layout, "layout must not be null");
			return this;
		}

		/**
		 * Sets whether the script runs as a Redis function (FCALL) where the server runs
		 * functions, which is leaner; {@code false} for EVALSHA always. Applies with Lettuce
		 * and a timeout; other connections run the script with EVALSHA. {@code true} by
		 * default.
		 * @param functions whether to run Redis functions
		 * @return this builder
		 */
		public Builder functions(boolean functions) {
			this.functions = functions;
			return this;
		}

		/**
		 * Creates the store.
		 * @return the store, to {@link RedisRateLimitStore#close() close} when done
		 */
		public RedisRateLimitStore build() {
			return new RedisRateLimitStore(this);
		}

	}

}
