package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.internal.core.CalendarWindows;
import io.github.ratelimit.internal.core.ShareRequest;
import io.github.ratelimit.internal.core.ShareGrant;
import io.github.ratelimit.internal.core.ShareStore;
import io.github.ratelimit.internal.core.RateLimitClock;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.BucketSnapshot;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.RateLimitStore;

/**
 * Buckets in Redis, decided atomically by one Lua script per call: a Redis function
 * (FCALL) where the server runs them and the store calls through Lettuce with a timeout,
 * else EVALSHA, falling back to EVAL when the server lost its script cache. Time comes
 * from Redis {@code TIME}, so application clocks may disagree, unless a clock is given
 * (tests).
 * <p>
 * A call that takes (an acquisition, a lease) carries a deadline on Redis's clock, the
 * moment the store stops waiting for it ({@link RedisDeadlines}), and a script Redis runs
 * later, after a stall, changes nothing: the fallback has decided its request meanwhile.
 * Refunds carry none. Only a store with a timeout of its own, on Lettuce and Redis time,
 * knows when it stops waiting.
 * <p>
 * Keys are {@code <prefix>{<identity>}:<limit id>}, the limit's {@link RateLimit#id() id}
 * being eight characters derived from its name (which may be a long route template): the
 * identity is the hash tag, so in a Redis Cluster the buckets of different identities
 * spread over the slots while every limit of one identity shares one slot and one call.
 * When the limits of a request fall into several slots, the slots are decided one after
 * another with one timestamp, and those already consumed are refunded if a later one
 * rejects.
 * <p>
 * With the {@link RedisKeyLayout#HASH_PER_SLOT hash-per-slot} layout, the buckets of token
 * and leaky bucket limits are instead fields of {@code <prefix>{<slot tag>}:<limit id>:h},
 * keyed by identity, the slot tag hashing to the identity's own slot: the same slots and
 * calls, several identities a key.
 * <p>
 * Redis has no time zone rules, so for a calendar quota the store sends the boundaries of
 * the windows around the application's present (the start of the previous, the current,
 * the next and the following window, computed with {@link java.time.zone.ZoneRules} on
 * the application's clock), and the script counts in the one containing Redis's time.
 * Application and Redis clocks may thus differ by up to a whole window; a Redis time
 * outside the windows sent fails the call, which the fail mode then answers.
 */
public final class RedisRateLimitStore implements RateLimitStore, ShareStore {

	/** Least TTL of keys written at an explicit time (tests), whatever their state needs. */
	private static final byte[] TEST_MIN_TTL_MILLIS = ascii("60000");

	private static final byte[] ACQUIRE = ascii("acquire");

	private static final byte[] CHECK = ascii("check");

	private static final byte[] REFUND = ascii("refund");

	private static final byte[] LEASE = ascii("lease");

	private static final byte[] EMPTY = new byte[0];

	/** Ends the name of a hash holding buckets, after the limit id. */
	private static final String HASH_SUFFIX = ":h";

	/** The time argument that makes the script read Redis {@code TIME}. */
	private static final long NOW_FROM_REDIS = Long.MIN_VALUE;

	/** Costs and counts as the script receives them, encoded once. */
	private static final byte[][] SMALL_NUMBERS = new byte[64][];

	static {
		for (int i = 0; i < SMALL_NUMBERS.length; i++) {
			SMALL_NUMBERS[i] = ascii(Integer.toString(i));
		}
	}

	/** Bound of the limits whose arguments are kept encoded. */
	private static final int MAX_ENCODED_LIMITS = 4096;

	/** Size of the table of recently encoded limits; a power of two. */
	private static final int RECENT_LIMITS = 64;

	/** Default key prefix. */
	public static final String DEFAULT_KEY_PREFIX = "ratelimit:";

	/**
	 * By set of algorithms (a bit per {@link Algorithm#ordinal()}), the script deciding
	 * them, composed on first use: Redis defines whatever a script holds on every call.
	 */
	private static final AtomicReferenceArray<Script> SCRIPTS = new AtomicReferenceArray<>(
			1 << Algorithm.values().length);

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> INSPECT = RedisScripts.inspect();

	/**
	 * Where asynchronous calls that cannot be sent without waiting (several Cluster slots,
	 * a connection still being opened, a factory other than Lettuce's) wait instead of on
	 * the caller's thread, and where replies are handed on: daemon threads, created as
	 * needed and dropped when idle.
	 */
	private static final Executor OFFLOAD = Executors.newCachedThreadPool((task) -> {
		Thread thread = new Thread(task, "ratelimit-redis-async");
		thread.setDaemon(true);
		return thread;
	});

	private final ScriptExecutor executor;

	private final StringRedisTemplate template;

	private final String keyPrefix;

	/** {@link #keyPrefix} in UTF-8, as every key begins. */
	private final byte[] keyPrefixBytes;

	private final RateLimitClock clock;

	/** The application's clock, which places the boundaries of calendar windows. */
	private final RateLimitClock applicationClock;

	private final boolean cluster;

	/** Deadlines of the calls that take, or {@code null} when calls carry none. */
	private final RedisDeadlines deadlines;

	private final RedisKeyLayout layout;

	private final Map<RateLimit, EncodedLimit> encodedLimits = new ConcurrentHashMap<>();

	/** Encoded limits by the identity hash of their {@link RateLimit}, see {@link #encoded}. */
	private final AtomicReferenceArray<EncodedLimit> recentLimits = new AtomicReferenceArray<>(RECENT_LIMITS);

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
		this(connectionFactory, keyPrefix, clock, timeout, RedisKeyLayout.KEY_PER_BUCKET);
	}

	/**
	 * Creates a store whose calls take at most {@code timeout}, laying out its keys as
	 * told.
	 * @param connectionFactory the application's connection factory
	 * @param keyPrefix prefix of every key
	 * @param clock the clock to decide at, or {@code null} to use Redis {@code TIME}
	 * @param timeout longest wait for Redis per call, or {@code null} for the connection's
	 * own command timeout; applied with Lettuce, whose commands run asynchronously
	 * @param layout how buckets map to keys
	 */
	public RedisRateLimitStore(RedisConnectionFactory connectionFactory, String keyPrefix, RateLimitClock clock,
			Duration timeout, RedisKeyLayout layout) {
		this(connectionFactory, keyPrefix, clock, timeout, layout, true);
	}

	/**
	 * Creates a store whose calls take at most {@code timeout}, laying out its keys as
	 * told, and running its script as a Redis function or not.
	 * @param connectionFactory the application's connection factory
	 * @param keyPrefix prefix of every key
	 * @param clock the clock to decide at, or {@code null} to use Redis {@code TIME}
	 * @param timeout longest wait for Redis per call, or {@code null} for the connection's
	 * own command timeout; applied with Lettuce, whose commands run asynchronously
	 * @param layout how buckets map to keys
	 * @param functions whether the script runs as a Redis function (FCALL) where the
	 * server runs functions, which is leaner; {@code false} for EVALSHA always. Applies
	 * with Lettuce and a timeout; other connections run the script with EVALSHA
	 */
	public RedisRateLimitStore(RedisConnectionFactory connectionFactory, String keyPrefix, RateLimitClock clock,
			Duration timeout, RedisKeyLayout layout, boolean functions) {
		if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
			throw new IllegalArgumentException("key prefix must not contain braces: " + keyPrefix);
		}
		this.template = new StringRedisTemplate(connectionFactory);
		this.executor = (connectionFactory instanceof LettuceConnectionFactory lettuce && timeout != null)
				? new LettuceScriptExecutor(lettuce, timeout, functions) : new TemplateScriptExecutor(this.template);
		this.keyPrefix = keyPrefix;
		this.keyPrefixBytes = keyPrefix.getBytes(StandardCharsets.UTF_8);
		this.clock = clock;
		this.applicationClock = (clock != null) ? clock : RateLimitClock.system();
		this.cluster = isCluster(connectionFactory);
		// a deadline is the time the caller stops waiting, on Redis's clock: known with a
		// timeout of the store's own, and comparable when the store decides on Redis time
		this.deadlines = (this.executor instanceof LettuceScriptExecutor && clock == null)
				? new RedisDeadlines(timeout.toNanos(), this.cluster) : null;
		this.layout = Objects.requireNonNull(layout, "layout must not be null");
	}

	@Override
	public RateLimitResult tryAcquire(List<Acquisition> acquisitions, long maxDelayMicros) {
		if (acquisitions.isEmpty()) {
			// no script runs, so there is no Redis time to report (parsing "" would throw)
			return new RateLimitResult(List.of(), (this.clock != null) ? this.clock.nowMicros() : 0, RateLimitResult.REDIS);
		}
		RateLimitStore.requireDistinct(acquisitions);
		Call call = new Call(acquisitions);
		RateLimitDecision[] decisions = new RateLimitDecision[acquisitions.size()];
		long now = (this.clock != null) ? this.clock.nowMicros() : NOW_FROM_REDIS;
		List<int[]> groups = groupBySlot(call);
		if (groups.size() == 1) {
			long timestamp = run(call, groups.get(0), now, ACQUIRE, maxDelayMicros, decisions);
			return new RateLimitResult(uncommittedUnlessAllAllowed(call, decisions), timestamp,
					RateLimitResult.REDIS);
		}
		List<int[]> consumed = new ArrayList<>();
		boolean allowed = true;
		try {
			for (int[] group : groups) {
				now = run(call, group, now, allowed ? ACQUIRE : CHECK, maxDelayMicros, decisions);
				boolean groupAllowed = Arrays.stream(group).noneMatch((i) -> decisions[i].rejects());
				if (allowed && groupAllowed) {
					// only what was taken is given back: a shadow limit that rejected took nothing
					consumed.add(Arrays.stream(group).filter((i) -> decisions[i].allowed()).toArray());
				}
				allowed &= groupAllowed;
			}
		}
		catch (RuntimeException ex) {
			// a later slot failed: give back what the earlier ones took, then let the fallback decide
			refundQuietly(call, consumed, now);
			throw ex;
		}
		if (!allowed) {
			for (int[] group : consumed) {
				if (group.length > 0) {
					run(call, group, now, REFUND, 0, null);
				}
			}
		}
		return new RateLimitResult(uncommittedUnlessAllAllowed(call, decisions), now, RateLimitResult.REDIS);
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
		Call call;
		List<int[]> groups;
		try {
			RateLimitStore.requireDistinct(acquisitions);
			call = new Call(acquisitions);
			groups = groupBySlot(call);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (groups.size() != 1 || !(this.executor instanceof LettuceScriptExecutor lettuce)) {
			return CompletableFuture.supplyAsync(() -> tryAcquire(acquisitions, maxDelayMicros), OFFLOAD);
		}
		int[] group = groups.get(0);
		long now = (this.clock != null) ? this.clock.nowMicros() : NOW_FROM_REDIS;
		Invocation invocation = prepare(call, group, now, ACQUIRE, maxDelayMicros);
		// completed off Lettuce's I/O thread: what the caller does next (a refund, the rest of
		// the request) must never wait for a reply that only that thread can deliver
		return lettuce.executeAsync(invocation.script(), invocation.keys(), invocation.args()).thenApplyAsync((reply) -> {
			RateLimitDecision[] decisions = new RateLimitDecision[acquisitions.size()];
			long timestamp = parse(answered(invocation, reply), call, group, decisions);
			return new RateLimitResult(uncommittedUnlessAllAllowed(call, decisions), timestamp,
					RateLimitResult.REDIS);
		}, OFFLOAD);
	}

	/**
	 * Decides the costs and leases the extras in one script call. Leases whose keys span
	 * several Cluster slots are decided exactly, one slot after another, and lease
	 * nothing; their costs must then be positive.
	 */
	@Override
	public ShareGrant grant(List<ShareRequest> leases) {
		Call call = leaseCall(leases);
		List<int[]> groups = groupBySlot(call);
		if (groups.size() != 1) {
			return leasedAcrossSlots(leases);
		}
		long now = (this.clock != null) ? this.clock.nowMicros() : NOW_FROM_REDIS;
		Invocation invocation = prepare(call, groups.get(0), now, LEASE, 0, extras(leases));
		return leased(execute(invocation), call, groups.get(0));
	}

	/**
	 * Leases like {@link #grant} through Lettuce's asynchronous API, so that the calls of a
	 * sync go out together on the shared connection (pipelined); leases spanning several
	 * slots, and a factory that is not Lettuce's, are leased on a pool thread.
	 */
	@Override
	public CompletionStage<ShareGrant> grantAsync(List<ShareRequest> leases) {
		Call call;
		List<int[]> groups;
		try {
			call = leaseCall(leases);
			groups = groupBySlot(call);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (groups.size() != 1 || !(this.executor instanceof LettuceScriptExecutor lettuce)) {
			return CompletableFuture.supplyAsync(() -> grant(leases), OFFLOAD);
		}
		long now = (this.clock != null) ? this.clock.nowMicros() : NOW_FROM_REDIS;
		Invocation invocation = prepare(call, groups.get(0), now, LEASE, 0, extras(leases));
		return lettuce.executeAsync(invocation.script(), invocation.keys(), invocation.args())
			.thenApplyAsync((reply) -> leased(answered(invocation, reply), call, groups.get(0)), OFFLOAD);
	}

	private Call leaseCall(List<ShareRequest> leases) {
		if (leases.isEmpty()) {
			throw new IllegalArgumentException("leases must not be empty");
		}
		Call call = new Call(leases.size());
		for (int i = 0; i < leases.size(); i++) {
			ShareRequest lease = leases.get(i);
			call.set(i, lease.limit(), lease.identity(), lease.cost());
			for (int j = 0; j < i; j++) {
				if (leases.get(j).key().equals(lease.key())) {
					throw new IllegalArgumentException("leases must name distinct buckets: " + lease.key());
				}
			}
		}
		return call;
	}

	private static long[] extras(List<ShareRequest> leases) {
		long[] extra = new long[leases.size()];
		for (int i = 0; i < extra.length; i++) {
			extra[i] = leases.get(i).extra();
		}
		return extra;
	}

	/**
	 * Leases spanning several Cluster slots: the costs decided exactly, slot after slot,
	 * then, when they are admitted, the extras leased slot after slot with no cost, at the
	 * time the costs were decided. The extras are not atomic with the costs: a concurrent
	 * caller can leave some ungranted, and a slot that fails grants none, but nothing is
	 * granted that its bucket did not have.
	 */
	private ShareGrant leasedAcrossSlots(List<ShareRequest> leases) {
		List<Acquisition> acquisitions = new ArrayList<>(leases.size());
		for (ShareRequest lease : leases) {
			if (lease.cost() > 0) {
				acquisitions.add(new Acquisition(lease.limit(), lease.identity(), lease.cost()));
			}
		}
		RateLimitResult paid = acquisitions.isEmpty() ? null : tryAcquire(acquisitions, 0);
		long now = (paid != null) ? paid.timestampMicros()
				: (this.clock != null) ? this.clock.nowMicros() : NOW_FROM_REDIS;
		RateLimitDecision[] decisions = new RateLimitDecision[leases.size()];
		int next = 0;
		for (int i = 0; i < leases.size(); i++) {
			ShareRequest lease = leases.get(i);
			decisions[i] = (lease.cost() > 0) ? paid.decisions().get(next++)
					: new RateLimitDecision(lease.limit(), true, 0, 0, 0, 0);
		}
		long[] extra = new long[leases.size()];
		if (paid == null || paid.allowed()) {
			Call call = new Call(leases.size());
			for (int i = 0; i < leases.size(); i++) {
				call.set(i, leases.get(i).limit(), leases.get(i).identity(), 0);
			}
			long[] wanted = extras(leases);
			for (int[] group : groupBySlot(call)) {
				try {
					Invocation invocation = prepare(call, group, now, LEASE, 0, wanted);
					List<?> reply = execute(invocation);
					RateLimitDecision[] taken = new RateLimitDecision[leases.size()];
					long timestamp = parse(reply, call, group, taken);
					for (int g = 0; g < group.length; g++) {
						int i = group[g];
						if (taken[i].allowed()) {
							extra[i] = number(reply, 1 + 3 * group.length + g);
							decisions[i] = taken[i];
						}
					}
					if (now == NOW_FROM_REDIS) {
						now = timestamp;
					}
				}
				catch (RuntimeException ex) {
					if (paid == null) {
						throw ex;
					}
					// the costs stand: this slot's shares get nothing more now
				}
			}
		}
		long timestamp = (paid != null) ? paid.timestampMicros() : now;
		return new ShareGrant(new RateLimitResult(List.of(decisions), timestamp, RateLimitResult.REDIS), extra);
	}

	/** The decisions of a lease call, and the units it took beyond each cost. */
	private static ShareGrant leased(List<?> reply, Call call, int[] group) {
		RateLimitDecision[] decisions = new RateLimitDecision[call.costs.length];
		long timestamp = parse(reply, call, group, decisions);
		long[] extra = new long[call.costs.length];
		for (int g = 0; g < group.length; g++) {
			extra[group[g]] = number(reply, 1 + 3 * group.length + g);
		}
		return new ShareGrant(new RateLimitResult(uncommittedUnlessAllAllowed(call, decisions), timestamp,
				RateLimitResult.REDIS), extra);
	}

	private void refundQuietly(Call call, List<int[]> consumed, long now) {
		for (int[] group : consumed) {
			try {
				if (group.length > 0) {
					run(call, group, now, REFUND, 0, null);
				}
			}
			catch (RuntimeException ignored) {
				// the store is failing: the fallback decides, and the key expires on its own
			}
		}
	}

	/** When one limit rejects, the others consumed nothing: report the quota they still hold. */
	private static List<RateLimitDecision> uncommittedUnlessAllAllowed(Call call, RateLimitDecision[] decisions) {
		boolean allowed = true;
		for (RateLimitDecision decision : decisions) {
			allowed &= !decision.rejects();
		}
		if (!allowed) {
			for (int i = 0; i < decisions.length; i++) {
				decisions[i] = decisions[i].uncommitted(call.costs[i]);
			}
		}
		return List.of(decisions);
	}

	@Override
	public void refund(List<Acquisition> acquisitions, RateLimitResult decided) {
		Call call = new Call(acquisitions);
		for (int[] group : groupBySlot(call)) {
			run(call, group, decided.timestampMicros(), REFUND, 0, null);
		}
	}

	/**
	 * Gives back through Lettuce's asynchronous API, as {@link #tryAcquireAsync} decides;
	 * refunds spanning several Cluster slots, and a factory that is not Lettuce's, run on
	 * a pool thread.
	 */
	@Override
	public CompletionStage<Void> refundAsync(List<Acquisition> acquisitions, RateLimitResult decided) {
		Call call;
		List<int[]> groups;
		try {
			call = new Call(acquisitions);
			groups = groupBySlot(call);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (groups.size() != 1 || !(this.executor instanceof LettuceScriptExecutor lettuce)) {
			return CompletableFuture.runAsync(() -> refund(acquisitions, decided), OFFLOAD);
		}
		Invocation invocation = prepare(call, groups.get(0), decided.timestampMicros(), REFUND, 0);
		return lettuce.executeAsync(invocation.script(), invocation.keys(), invocation.args())
			.thenAcceptAsync((reply) -> parse(reply, call, groups.get(0), null), OFFLOAD);
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
		EncodedLimit encoded = encoded(limit);
		List<?> reply = this.template.execute(INSPECT, keys, now, "1", spec.redisCode(),
				Long.toString(limit.capacity()),
				new String(encoded.parameter(this.applicationClock), StandardCharsets.US_ASCII),
				encoded.hashed ? identity : "");
		if (reply == null || reply.size() < 6) {
			throw new IllegalStateException("Rate limit inspect script returned no reply");
		}
		long reset = number(reply, 4);
		RateLimitDecision probe = new RateLimitDecision(limit, number(reply, 2) == 1, number(reply, 3), reset,
				number(reply, 5), 0, encoded.windowMicros(number(reply, 0), reset));
		return BucketSnapshot.of(probe, identity, number(reply, 1) == 1, RateLimitResult.REDIS);
	}

	/**
	 * Deletes the bucket's keys, which share the identity's hash tag and so one slot, or
	 * its field of the hash it is kept in.
	 */
	@Override
	public boolean reset(RateLimit limit, String identity) {
		if (encoded(limit).hashed) {
			Long deleted = this.template.opsForHash().delete(key(limit, identity), identity);
			return deleted != null && deleted > 0;
		}
		Long deleted = this.template.delete(keys(AlgorithmSpec.of(limit.algorithm()), key(limit, identity)));
		return deleted != null && deleted > 0;
	}

	/**
	 * Deletes every key under this store's prefix, found with {@code KEYS} (on every
	 * master of a Cluster): meant for tests, since {@code KEYS} holds the server while it
	 * looks through all its keys.
	 */
	@Override
	public void resetAll() {
		// the prefix matched literally: glob characters in it escaped
		Set<String> keys = this.template.keys(this.keyPrefix.replaceAll("[*?\\[\\]\\\\]", "\\\\$0") + "*");
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
		List<Script> scripts = new ArrayList<>();
		for (Algorithm algorithm : Algorithm.values()) {
			scripts.add(script(1 << algorithm.ordinal()));
		}
		this.template.execute((RedisCallback<Object>) (connection) -> {
			if (this.deadlines != null) {
				long sent = System.nanoTime();
				Long time = connection.serverCommands().time(TimeUnit.MICROSECONDS);
				if (time != null) {
					this.deadlines.observe(-1, sent, System.nanoTime(), time);
				}
			}
			for (Script script : scripts) {
				connection.scriptingCommands().scriptLoad(script.bytes());
			}
			return null;
		});
		if (this.executor instanceof LettuceScriptExecutor lettuce) {
			lettuce.preload(scripts);
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
		return key(acquisition.limit(), acquisition.identity());
	}

	/**
	 * The field holding the state of a bucket kept in a hash (the
	 * {@link RedisKeyLayout#HASH_PER_SLOT hash-per-slot} layout), which is its identity.
	 * @param acquisition the acquisition
	 * @return the field, or {@code null} when the bucket is a key of its own
	 */
	public String field(Acquisition acquisition) {
		return encoded(acquisition.limit()).hashed ? acquisition.identity() : null;
	}

	private String key(RateLimit limit, String identity) {
		return new String(encoded(limit).key(this.keyPrefixBytes, identity), StandardCharsets.UTF_8);
	}

	/**
	 * Runs the script for some acquisitions of one slot; fills their decisions, returns the
	 * time used.
	 */
	private long run(Call call, int[] group, long now, byte[] mode, long maxDelayMicros,
			RateLimitDecision[] decisions) {
		Invocation invocation = prepare(call, group, now, mode, maxDelayMicros);
		return parse(execute(invocation), call, group, decisions);
	}

	/** The script, keys and arguments deciding some acquisitions of one slot. */
	private Invocation prepare(Call call, int[] group, long now, byte[] mode, long maxDelayMicros) {
		return prepare(call, group, now, mode, maxDelayMicros, null);
	}

	/** The same, for a lease: {@code extra} holds the units wanted beyond each cost. */
	private Invocation prepare(Call call, int[] group, long now, byte[] mode, long maxDelayMicros, long[] extra) {
		int keyCount = 0;
		int algorithms = 0;
		for (int i : group) {
			keyCount += call.limits[i].keySuffixes.length;
			algorithms |= call.limits[i].algorithm;
		}
		int slot = this.cluster ? SlotHash.getSlot(call.keys[group[0]]) : 0;
		long prepared = System.nanoTime();
		// a refund gives back what Redis itself took, which nobody else gives back: it may come late
		long deadline = (this.deadlines != null && mode != REFUND) ? this.deadlines.deadline(slot, prepared) : -1;
		boolean options = this.clock != null || maxDelayMicros > 0 || extra != null || deadline >= 0;
		byte[][] keys = new byte[keyCount][];
		byte[][] args = new byte[3 + group.length * 5 + (options ? 3 : 0) + ((extra != null) ? group.length : 0)][];
		args[0] = (now == NOW_FROM_REDIS) ? EMPTY : ascii(now);
		args[1] = mode;
		args[2] = ascii(group.length);
		int k = 0;
		int a = 3;
		for (int i : group) {
			EncodedLimit limit = call.limits[i];
			byte[] key = call.keys[i];
			for (byte[] suffix : limit.keySuffixes) {
				keys[k++] = (suffix.length == 0) ? key : concat(key, suffix);
			}
			args[a++] = limit.code;
			args[a++] = limit.capacity;
			args[a++] = limit.parameter(this.applicationClock);
			args[a++] = ascii(call.costs[i]);
			args[a++] = call.fields[i];
		}
		if (options) {
			// the test clock stands still while Redis expires keys in real time
			args[a++] = (this.clock != null) ? TEST_MIN_TTL_MILLIS : EMPTY;
			args[a++] = ascii(maxDelayMicros);
			args[a++] = (deadline >= 0) ? ascii(deadline) : EMPTY;
		}
		if (extra != null) {
			for (int i : group) {
				args[a++] = ascii(extra[i]);
			}
		}
		return new Invocation(script(algorithms), keys, args, slot, prepared);
	}

	private List<?> execute(Invocation invocation) {
		return answered(invocation,
				this.executor.execute(invocation.script(), invocation.keys(), invocation.args()));
	}

	/**
	 * The reply of a call, once the deadlines have learnt the Redis time it carries; fails
	 * when the script ran after its deadline, and so changed nothing: a reply that arrives
	 * nevertheless (the caller still waits) proves the deadline's estimate of Redis time
	 * too low, which the next calls then no longer use.
	 */
	private List<?> answered(Invocation invocation, List<?> reply) {
		if (this.deadlines == null || reply == null || reply.isEmpty()) {
			return reply;
		}
		long time = number(reply, 0);
		if (time < 0) {
			this.deadlines.observe(invocation.slot(), invocation.preparedNanos(), System.nanoTime(), -time);
			throw new QueryTimeoutException("Redis ran the rate limit script after its deadline; it changed nothing");
		}
		if (invocation.args()[0].length == 0) {
			// Redis TIME, unless the call named its time (a refund, a later Cluster slot)
			this.deadlines.observe(invocation.slot(), invocation.preparedNanos(), System.nanoTime(), time);
		}
		return reply;
	}

	/** Fills the decisions of a group from the script's reply; returns the time decided at. */
	private static long parse(List<?> reply, Call call, int[] group, RateLimitDecision[] decisions) {
		if (reply == null || reply.isEmpty()) {
			throw new IllegalStateException("Rate limit script returned no reply");
		}
		if (decisions != null) {
			long decidedAt = number(reply, 0);
			for (int g = 0; g < group.length; g++) {
				// remaining when admitted, -1 - remaining when rejected; then reset, then the
				// delay when admitted or the retry-after when rejected
				int base = 1 + g * 3;
				long remaining = number(reply, base);
				long reset = number(reply, base + 1);
				long wait = number(reply, base + 2);
				RateLimit limit = call.rateLimits[group[g]];
				long window = call.limits[group[g]].windowMicros(decidedAt, reset);
				decisions[group[g]] = (remaining >= 0)
						? new RateLimitDecision(limit, true, remaining, reset, 0, wait, window)
						: new RateLimitDecision(limit, false, -1 - remaining, reset, Math.max(1, wait), 0, window);
			}
		}
		return number(reply, 0);
	}

	private List<int[]> groupBySlot(Call call) {
		int count = call.keys.length;
		if (!this.cluster || count == 1) {
			int[] all = new int[count];
			for (int i = 0; i < count; i++) {
				all[i] = i;
			}
			return List.of(all);
		}
		Map<Integer, List<Integer>> slots = new LinkedHashMap<>();
		for (int i = 0; i < count; i++) {
			slots.computeIfAbsent(SlotHash.getSlot(call.keys[i]), (s) -> new ArrayList<>(2)).add(i);
		}
		List<int[]> groups = new ArrayList<>(slots.size());
		for (List<Integer> slot : slots.values()) {
			groups.add(slot.stream().mapToInt(Integer::intValue).toArray());
		}
		return groups;
	}

	/** The script deciding a set of algorithms, a bit per algorithm. */
	private static Script script(int algorithms) {
		Script script = SCRIPTS.get(algorithms);
		if (script == null) {
			List<AlgorithmSpec> specs = new ArrayList<>();
			for (Algorithm algorithm : Algorithm.values()) {
				if ((algorithms & (1 << algorithm.ordinal())) != 0) {
					specs.add(AlgorithmSpec.of(algorithm));
				}
			}
			script = new Script(RedisScripts.acquire(specs), RedisScripts.acquireFunction(specs));
			SCRIPTS.compareAndSet(algorithms, null, script);
		}
		return script;
	}

	/**
	 * A composed script, by its SHA-1 and its text, and the same as a Redis function: its
	 * name and its library's code.
	 */
	private record Script(String sha, byte[] bytes, String function, String library) {

		@SuppressWarnings("rawtypes")
		Script(RedisScript<List> script, RedisScripts.RedisFunction function) {
			this(script.getSha1(), script.getScriptAsString().getBytes(StandardCharsets.UTF_8), function.name(),
					function.library());
		}

	}

	/**
	 * The encoded limit, computed once per limit. A request passes the same
	 * {@link RateLimit} instance every time, so it is first looked up by reference in a
	 * small table, sparing the map the hash and the comparison of every field of the record.
	 */
	private EncodedLimit encoded(RateLimit limit) {
		int slot = System.identityHashCode(limit) & (RECENT_LIMITS - 1);
		EncodedLimit recent = this.recentLimits.get(slot);
		if (recent != null && recent.limit == limit) {
			return recent;
		}
		EncodedLimit encoded = this.encodedLimits.get(limit);
		if (encoded != null) {
			this.recentLimits.set(slot, encoded);
		}
		else {
			if (this.encodedLimits.size() >= MAX_ENCODED_LIMITS) {
				// limits are configured, so few; a caller making limits afresh must not grow this
				this.encodedLimits.clear();
			}
			encoded = new EncodedLimit(limit, this.layout);
			this.encodedLimits.put(limit, encoded);
		}
		return encoded;
	}

	/** The acquisitions (or leases) of one call, with their encoded limits and keys. */
	private final class Call {

		final RateLimit[] rateLimits;

		final long[] costs;

		final EncodedLimit[] limits;

		final byte[][] keys;

		/** Each bucket's field in the hash its key names, or empty for a key of its own. */
		final byte[][] fields;

		Call(List<Acquisition> acquisitions) {
			this(acquisitions.size());
			for (int i = 0; i < this.limits.length; i++) {
				Acquisition acquisition = acquisitions.get(i);
				set(i, acquisition.limit(), acquisition.identity(), acquisition.cost());
			}
		}

		Call(int size) {
			this.rateLimits = new RateLimit[size];
			this.costs = new long[size];
			this.limits = new EncodedLimit[size];
			this.keys = new byte[size][];
			this.fields = new byte[size][];
		}

		void set(int i, RateLimit limit, String identity, long cost) {
			this.rateLimits[i] = limit;
			this.costs[i] = cost;
			this.limits[i] = encoded(limit);
			this.keys[i] = this.limits[i].key(RedisRateLimitStore.this.keyPrefixBytes, identity);
			this.fields[i] = this.limits[i].hashed ? identity.getBytes(StandardCharsets.UTF_8) : EMPTY;
		}

	}

	/**
	 * What the script receives for a limit, encoded once: its code, capacity, parameter and
	 * key parts; for a calendar quota, the window boundaries around the application's
	 * present, encoded again when its clock enters the next window.
	 */
	private static final class EncodedLimit {

		final RateLimit limit;

		final byte[] code;

		final byte[] capacity;

		final byte[] parameter;

		/**
		 * {@code "}:<limit id>"}, which ends the key after the identity, or for a hash
		 * {@code "}:<limit id>:h"}: a hash is never named as a key of its own would be,
		 * even by an identity that reads like a slot tag, whichever layout wrote it.
		 */
		final byte[] keyEnd;

		final byte[][] keySuffixes;

		/** The limit's algorithm as a bit of a set. */
		final int algorithm;

		/** Whether its buckets are fields of a hash per slot rather than keys of their own. */
		final boolean hashed;

		/** A calendar quota's boundaries last sent, or {@code null} before the first call. */
		private volatile Boundaries boundaries;

		EncodedLimit(RateLimit limit, RedisKeyLayout layout) {
			AlgorithmSpec spec = AlgorithmSpec.of(limit.algorithm());
			this.hashed = layout == RedisKeyLayout.HASH_PER_SLOT && spec.redisHashable();
			this.limit = limit;
			this.algorithm = 1 << limit.algorithm().ordinal();
			this.code = (spec.redisCode() + (limit.shadow() ? "!" : "")).getBytes(StandardCharsets.UTF_8);
			this.capacity = ascii(limit.capacity());
			this.parameter = ascii(spec.redisParameter(limit));
			this.keyEnd = ("}:" + limit.id() + (this.hashed ? HASH_SUFFIX : "")).getBytes(StandardCharsets.US_ASCII);
			this.keySuffixes = spec.redisKeySuffixes()
				.stream()
				.map((suffix) -> suffix.getBytes(StandardCharsets.UTF_8))
				.toArray(byte[][]::new);
		}

		/**
		 * The parameter the script receives: the same for every call, except for a calendar
		 * quota, whose window boundaries around the application's present it is.
		 */
		byte[] parameter(RateLimitClock applicationClock) {
			if (!this.limit.isCalendar()) {
				return this.parameter;
			}
			long now = applicationClock.nowMicros();
			Boundaries sent = this.boundaries;
			if (sent == null || now < sent.micros[1] || now >= sent.micros[2]) {
				long[] micros = CalendarWindows.boundariesAround(this.limit.calendar(), this.limit.timeZone(), now);
				StringBuilder text = new StringBuilder(68);
				for (long boundary : micros) {
					text.append((text.length() > 0) ? " " : "").append(boundary);
				}
				sent = new Boundaries(micros, ascii(text.toString()));
				this.boundaries = sent;
			}
			return sent.encoded;
		}

		/**
		 * Length of the window a decision at {@code decidedAt} was taken in, whose end is
		 * {@code resetMicros} later: for a calendar quota the window before that boundary.
		 */
		long windowMicros(long decidedAt, long resetMicros) {
			if (!this.limit.isCalendar()) {
				return this.limit.quotaWindowMicros();
			}
			long end = decidedAt + resetMicros;
			Boundaries sent = this.boundaries;
			if (sent != null) {
				for (int i = 1; i < sent.micros.length; i++) {
					if (sent.micros[i] == end) {
						return end - sent.micros[i - 1];
					}
				}
			}
			return end - CalendarWindows.startMicros(this.limit.calendar(), this.limit.timeZone(), end - 1);
		}

		/**
		 * {@code <prefix>{<identity>}:<limit id>}, or for a bucket kept in a hash
		 * {@code <prefix>{<tag of the identity's slot>}:<limit id>:h}.
		 */
		byte[] key(byte[] start, String identity) {
			byte[] middle = escape(identity).getBytes(StandardCharsets.UTF_8);
			if (this.hashed) {
				middle = SlotTags.of(SlotHash.getSlot(middle));
			}
			byte[] key = new byte[start.length + 1 + middle.length + this.keyEnd.length];
			System.arraycopy(start, 0, key, 0, start.length);
			key[start.length] = '{';
			System.arraycopy(middle, 0, key, start.length + 1, middle.length);
			System.arraycopy(this.keyEnd, 0, key, start.length + 1 + middle.length, this.keyEnd.length);
			return key;
		}

	}

	/** Window boundaries of a calendar quota, in microseconds and as the script receives them. */
	private record Boundaries(long[] micros, byte[] encoded) {
	}

	/** One script call: the script and its keys and arguments. */
	private record Invocation(Script script, byte[][] keys, byte[][] args, int slot, long preparedNanos) {
	}

	/** Runs the composed script. */
	private interface ScriptExecutor {

		List<?> execute(Script script, byte[][] keys, byte[][] args);

	}

	/** Through Spring Data Redis: EVALSHA with EVAL fallback, bounded by the connection's timeout. */
	private static final class TemplateScriptExecutor implements ScriptExecutor {

		private final StringRedisTemplate redis;

		TemplateScriptExecutor(StringRedisTemplate redis) {
			this.redis = redis;
		}

		@Override
		public List<?> execute(Script script, byte[][] keys, byte[][] args) {
			byte[][] keysAndArgs = new byte[keys.length + args.length][];
			System.arraycopy(keys, 0, keysAndArgs, 0, keys.length);
			System.arraycopy(args, 0, keysAndArgs, keys.length, args.length);
			return this.redis.execute((RedisCallback<List<?>>) (connection) -> {
				try {
					return connection.scriptingCommands().evalSha(script.sha(), ReturnType.MULTI, keys.length, keysAndArgs);
				}
				catch (RuntimeException ex) {
					if (!isNoScript(ex)) {
						throw ex;
					}
					return connection.scriptingCommands().eval(script.bytes(), ReturnType.MULTI, keys.length, keysAndArgs);
				}
			});
		}

		private static boolean isNoScript(Throwable ex) {
			for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
				if (cause.getMessage() != null && cause.getMessage().contains("NOSCRIPT")) {
					return true;
				}
			}
			return false;
		}

	}

	/**
	 * Through Lettuce's asynchronous API on the application's shared connection, so that
	 * each call waits at most the configured timeout whatever the connection's command
	 * timeout is. The script runs as a Redis function (FCALL), which Redis defines once
	 * rather than on every call; the library is loaded (FUNCTION LOAD, on every primary of
	 * a cluster) when the server answers that it does not have it. A server that runs no
	 * functions (before Redis 7, or an ACL user that may not call or load them) gets
	 * EVALSHA from then on, and EVAL when it lost the script. The factory opens
	 * its shared connection on first use and blocks while it does (up to the connect and
	 * command timeouts, 60 seconds by default, when Redis hangs); the connection is
	 * therefore looked up on a thread of its own, and calls wait for it within their
	 * timeout. Its commands are then kept, not looked up again per call (which takes the
	 * factory's lock), until a call fails.
	 */
	private static final class LettuceScriptExecutor implements ScriptExecutor {

		private final LettuceConnectionFactory connectionFactory;

		private final long timeoutNanos;

		private final AtomicReference<CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>>> lookup = new AtomicReference<>();

		/** The shared connection's commands, or {@code null} until looked up (again). */
		private volatile RedisClusterAsyncCommands<byte[], byte[]> shared;

		/** Whether scripts run as Redis functions; cleared for good when the server runs none. */
		private volatile boolean functions;

		/** Libraries being loaded, by function name. */
		private final Map<String, CompletableFuture<Object>> loads = new ConcurrentHashMap<>();

		LettuceScriptExecutor(LettuceConnectionFactory connectionFactory, Duration timeout, boolean functions) {
			this.connectionFactory = connectionFactory;
			this.timeoutNanos = timeout.toNanos();
			this.functions = functions;
		}

		@Override
		public List<?> execute(Script script, byte[][] keys, byte[][] args) {
			long deadline = System.nanoTime() + this.timeoutNanos;
			RedisClusterAsyncCommands<byte[], byte[]> commands = this.shared;
			if (commands == null) {
				commands = awaitLookup(deadline);
			}
			if (commands != null) {
				try {
					return execute(commands, script, keys, args, deadline);
				}
				catch (RuntimeException ex) {
					// look the connection up again, through the factory, which may have replaced it
					this.shared = null;
					throw ex;
				}
			}
			// a factory that does not share its connection lends one per call
			try (RedisConnection connection = this.connectionFactory.getConnection()) {
				return execute(nativeCommands(connection), script, keys, args, deadline);
			}
		}

		/**
		 * Sends the script without waiting for its reply (see the class description);
		 * fails with {@link QueryTimeoutException} after the timeout. Before the shared
		 * connection is known, and with a factory that lends a connection per call, the
		 * call waits for it on a pool thread.
		 */
		CompletableFuture<List<?>> executeAsync(Script script, byte[][] keys, byte[][] args) {
			RedisClusterAsyncCommands<byte[], byte[]> commands = this.shared;
			if (commands == null) {
				return CompletableFuture.supplyAsync(() -> execute(script, keys, args), OFFLOAD);
			}
			CompletableFuture<List<?>> reply = new CompletableFuture<>();
			send(commands, script, keys, args, reply);
			return reply.orTimeout(this.timeoutNanos, TimeUnit.NANOSECONDS).handle((value, failure) -> {
				if (failure == null) {
					return value;
				}
				// look the connection up again, through the factory, which may have replaced it
				this.shared = null;
				Throwable cause = unwrap(failure);
				if (cause instanceof TimeoutException) {
					throw new QueryTimeoutException("Redis did not answer the rate limit script in time", cause);
				}
				throw new RedisSystemException("Rate limit script failed: " + cause.getMessage(), cause);
			});
		}

		/** Loads the libraries of these scripts, unless the server runs no functions. */
		void preload(List<Script> scripts) {
			long deadline = System.nanoTime() + this.timeoutNanos;
			RedisClusterAsyncCommands<byte[], byte[]> commands = this.shared;
			if (commands == null) {
				commands = awaitLookup(deadline);
			}
			if (commands == null) {
				// a connection lent per call: libraries are loaded when first missed
				return;
			}
			for (Script script : scripts) {
				if (!this.functions) {
					return;
				}
				CompletableFuture<List<?>> loaded = new CompletableFuture<>();
				load(commands, script).whenComplete((value, failure) -> {
					if (failure == null || runsNoFunctions(unwrap(failure))) {
						// refused: the server runs no functions, and calls take the script
						this.functions = (failure == null);
						loaded.complete(List.of());
					}
					else {
						loaded.completeExceptionally(failure);
					}
				});
				await(loaded, deadline);
			}
		}

		/** FCALL, loading the library first when the server lacks it; the script where it runs no functions. */
		private void send(RedisClusterAsyncCommands<byte[], byte[]> commands, Script script, byte[][] keys,
				byte[][] args, CompletableFuture<List<?>> reply) {
			if (!this.functions) {
				sendScript(commands, script, keys, args, reply);
				return;
			}
			commands.<List<Object>>fcall(script.function(), ScriptOutputType.MULTI, keys, args)
				.whenComplete((value, failure) -> {
					if (failure == null) {
						reply.complete(value);
					}
					else {
						recover(commands, script, keys, args, reply, failure);
					}
				});
		}

		/**
		 * After a failed FCALL: loads the library and calls again when Redis lacks it,
		 * sends the script when the server runs no functions, else fails.
		 */
		private void recover(RedisClusterAsyncCommands<byte[], byte[]> commands, Script script, byte[][] keys,
				byte[][] args, CompletableFuture<List<?>> reply, Throwable failure) {
			if (!isMissingFunction(unwrap(failure))) {
				fallBackOrFail(commands, script, keys, args, reply, failure);
				return;
			}
			loadOnce(commands, script).whenComplete((loaded, notLoaded) -> {
				if (notLoaded == null) {
					commands.<List<Object>>fcall(script.function(), ScriptOutputType.MULTI, keys, args)
						.whenComplete((again, failed) -> complete(reply, again, failed));
				}
				else {
					// refused for good, or not loaded this time (a primary of a cluster failing
					// over, Redis out of memory): the script, which needs its own node only
					if (runsNoFunctions(unwrap(notLoaded))) {
						this.functions = false;
					}
					sendScript(commands, script, keys, args, reply);
				}
			});
		}

		/**
		 * Loads the script's library, or joins the load already under way: the calls that
		 * miss it together (after a restart, say) load it once.
		 */
		private CompletionStage<?> loadOnce(RedisClusterAsyncCommands<byte[], byte[]> commands, Script script) {
			CompletableFuture<Object> mine = new CompletableFuture<>();
			CompletableFuture<Object> running = this.loads.putIfAbsent(script.function(), mine);
			if (running != null) {
				return running;
			}
			load(commands, script).whenComplete((loaded, failure) -> {
				this.loads.remove(script.function(), mine);
				if (failure != null) {
					mine.completeExceptionally(failure);
				}
				else {
					mine.complete(loaded);
				}
			});
			return mine;
		}

		/** The script instead when the server runs no functions; else the call fails. */
		private void fallBackOrFail(RedisClusterAsyncCommands<byte[], byte[]> commands, Script script,
				byte[][] keys, byte[][] args, CompletableFuture<List<?>> reply, Throwable failure) {
			if (runsNoFunctions(unwrap(failure))) {
				this.functions = false;
				sendScript(commands, script, keys, args, reply);
			}
			else {
				reply.completeExceptionally(failure);
			}
		}

		/** EVALSHA, then EVAL when the server lost the script. */
		private static void sendScript(RedisClusterAsyncCommands<byte[], byte[]> commands, Script script,
				byte[][] keys, byte[][] args, CompletableFuture<List<?>> reply) {
			commands.<List<Object>>evalsha(script.sha(), ScriptOutputType.MULTI, keys, args)
				.whenComplete((value, failure) -> {
					if (failure == null) {
						reply.complete(value);
					}
					else if (unwrap(failure) instanceof RedisNoScriptException) {
						commands.<List<Object>>eval(script.bytes(), ScriptOutputType.MULTI, keys, args)
							.whenComplete((loaded, again) -> complete(reply, loaded, again));
					}
					else {
						complete(reply, null, failure);
					}
				});
		}

		/**
		 * Loads the script's library, replacing one of the same name (the same code, which
		 * another instance may be loading too). The shards of a cluster do not share
		 * functions, so every primary gets it.
		 */
		private static CompletionStage<?> load(RedisClusterAsyncCommands<byte[], byte[]> commands, Script script) {
			if (commands instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster) {
				return cluster.masters().commands().functionLoad(script.library(), true);
			}
			return commands.functionLoad(script.library(), true);
		}

		private static boolean isMissingFunction(Throwable failure) {
			return failure instanceof RedisCommandExecutionException && failure.getMessage() != null
					&& failure.getMessage().contains("Function not found");
		}

		/**
		 * Redis before 7 knows no FCALL; an ACL user may be denied FCALL or FUNCTION LOAD but
		 * allowed scripts (a denied key is denied to scripts as well, and says so).
		 */
		private static boolean runsNoFunctions(Throwable failure) {
			if (!(failure instanceof RedisCommandExecutionException) || failure.getMessage() == null) {
				return false;
			}
			String message = failure.getMessage();
			return message.startsWith("ERR unknown command") || (message.startsWith("NOPERM")
					&& (message.contains("'fcall'") || message.contains("'function")));
		}

		private static void complete(CompletableFuture<List<?>> reply, List<?> value, Throwable failure) {
			if (failure != null) {
				reply.completeExceptionally(failure);
			}
			else {
				reply.complete(value);
			}
		}

		private static Throwable unwrap(Throwable failure) {
			Throwable cause = failure;
			while ((cause instanceof CompletionException || cause instanceof ExecutionException)
					&& cause.getCause() != null) {
				cause = cause.getCause();
			}
			return cause;
		}

		/**
		 * Waits for the call the asynchronous path would send, as directly: FCALL (or
		 * EVALSHA) awaited as it is, the loading and the fallback after a failure left to
		 * the asynchronous path.
		 */
		private List<?> execute(RedisClusterAsyncCommands<byte[], byte[]> commands, Script script, byte[][] keys,
				byte[][] args, long deadline) {
			if (this.functions) {
				Throwable failure;
				try {
					return await(commands.fcall(script.function(), ScriptOutputType.MULTI, keys, args), deadline);
				}
				catch (RedisSystemException ex) {
					failure = ex.getCause();
				}
				CompletableFuture<List<?>> reply = new CompletableFuture<>();
				recover(commands, script, keys, args, reply, failure);
				return await(reply, deadline);
			}
			try {
				return await(commands.evalsha(script.sha(), ScriptOutputType.MULTI, keys, args), deadline);
			}
			catch (RedisNoScriptException ex) {
				return await(commands.eval(script.bytes(), ScriptOutputType.MULTI, keys, args), deadline);
			}
		}

		/** The shared connection's commands, or {@code null} when the factory does not share one. */
		private RedisClusterAsyncCommands<byte[], byte[]> awaitLookup(long deadline) {
			CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> attempt = this.lookup.get();
			if (attempt == null || attempt.isCompletedExceptionally()
					|| (attempt.isDone() && this.shared == null && attempt.getNow(null) != null)) {
				CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> next = new CompletableFuture<>();
				if (this.lookup.compareAndSet(attempt, next)) {
					Thread connector = new Thread(() -> {
						try (RedisConnection connection = this.connectionFactory.getConnection()) {
							RedisClusterAsyncCommands<byte[], byte[]> commands = this.connectionFactory
								.getShareNativeConnection() ? nativeCommands(connection) : null;
							this.shared = commands;
							next.complete(commands);
						}
						catch (Throwable ex) {
							// whatever it is, the calls waiting for it must learn of it
							next.completeExceptionally(ex);
						}
					}, "ratelimit-redis-connect");
					connector.setDaemon(true);
					connector.start();
				}
				attempt = this.lookup.get();
			}
			try {
				return attempt.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
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

		@SuppressWarnings("unchecked")
		private static RedisClusterAsyncCommands<byte[], byte[]> nativeCommands(RedisConnection connection) {
			return (RedisClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection();
		}

		private static List<?> await(Future<? extends List<?>> future, long deadline) {
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
				Throwable cause = unwrap(ex.getCause());
				if (cause instanceof RedisNoScriptException noScript) {
					throw noScript;
				}
				throw new RedisSystemException("Rate limit script failed: " + cause.getMessage(), cause);
			}
		}

	}

	private static long number(List<?> reply, int index) {
		return ((Number) reply.get(index)).longValue();
	}

	private static byte[] ascii(long value) {
		if (value >= 0 && value < SMALL_NUMBERS.length) {
			return SMALL_NUMBERS[(int) value];
		}
		return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}

	private static byte[] ascii(String value) {
		return value.getBytes(StandardCharsets.US_ASCII);
	}

	private static byte[] concat(byte[] first, byte[] second) {
		byte[] both = Arrays.copyOf(first, first.length + second.length);
		System.arraycopy(second, 0, both, first.length, second.length);
		return both;
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
