package io.github.ratelimit.internal.redis;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;

import org.springframework.dao.QueryTimeoutException;

import io.github.ratelimit.internal.redis.ScriptArguments.Invocation;
import io.github.ratelimit.internal.redis.ScriptArguments.Mode;
import io.github.ratelimit.store.RateLimitDecision;

/**
 * Runs a store's script calls over its transport and checks their replies against the
 * deadlines: synchronously on any connection, or, through Lettuce, asynchronously with
 * the reply handed on off Lettuce's I/O thread.
 * <p>
 * A call that takes (an acquisition, a lease) carries a deadline on Redis's clock, the
 * moment the store stops waiting for it ({@link RedisDeadlines}), and a script Redis runs
 * later, after a stall, changes nothing: the fallback has decided its request meanwhile.
 */
final class ScriptRunner {

	private final ScriptExecutor executor;

	private final ScriptArguments arguments;

	/** Deadlines of the calls that take, or {@code null} when calls carry none. */
	private final RedisDeadlines deadlines;

	private final AsyncOffload offload;

	ScriptRunner(ScriptExecutor executor, ScriptArguments arguments, RedisDeadlines deadlines, AsyncOffload offload) {
		this.executor = executor;
		this.arguments = arguments;
		this.deadlines = deadlines;
		this.offload = offload;
	}

	/**
	 * Runs the script for some buckets of one slot.
	 * @return the time decided at
	 */
	long run(ScriptCall call, int[] group, long now, Mode mode, long maxDelayMicros, RateLimitDecision[] decisions) {
		Invocation invocation = this.arguments.prepare(call, group, now, mode, maxDelayMicros);
		return ScriptReplies.parse(execute(invocation), call, group, decisions);
	}

	/** Runs a prepared call and waits for its checked reply. */
	List<?> execute(Invocation invocation) {
		return answered(invocation,
				this.executor.execute(invocation.script(), invocation.keys(), invocation.args()));
	}

	/** Whether calls can be sent without holding the caller's thread. */
	boolean sendsAsync() {
		return this.executor instanceof LettuceScriptExecutor;
	}

	/**
	 * Sends a prepared call without waiting (the transport must {@link #sendsAsync() send
	 * asynchronously}); the reply is read on the store's pool, never on Lettuce's I/O
	 * thread: what the caller does next (a refund, the rest of the request) must never
	 * wait for a reply that only that thread can deliver.
	 */
	<T> CompletionStage<T> send(Invocation invocation, Function<List<?>, T> read) {
		if (this.offload.isClosed()) {
			// nobody could read the reply: nothing is sent
			return CompletableFuture.failedFuture(AsyncOffload.closed());
		}
		CompletableFuture<List<?>> reply = ((LettuceScriptExecutor) this.executor).executeAsync(invocation.script(),
				invocation.keys(), invocation.args());
		return reply.thenApplyAsync((value) -> read.apply(answered(invocation, value)), this.offload);
	}

	/** Runs a task on the store's pool, never on the caller's thread. */
	<T> CompletionStage<T> offload(Supplier<T> task) {
		return this.offload.supply(task);
	}

	/** Runs a task on the store's pool, never on the caller's thread. */
	CompletionStage<Void> offload(Runnable task) {
		return this.offload.run(task);
	}

	/** Learns Redis time read with {@code TIME} between two moments of {@link System#nanoTime()}. */
	void observeTime(long sentNanos, long receivedNanos, long redisMicros) {
		if (this.deadlines != null) {
			this.deadlines.observe(-1, sentNanos, receivedNanos, redisMicros);
		}
	}

	boolean hasDeadlines() {
		return this.deadlines != null;
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
		long time = ScriptReplies.number(reply, 0);
		if (time < 0) {
			this.deadlines.observe(invocation.slot(), invocation.preparedNanos(), System.nanoTime(), -time);
			throw new QueryTimeoutException("Redis ran the rate limit script after its deadline; it changed nothing");
		}
		if (invocation.atRedisTime()) {
			// Redis TIME, unless the call named its time (a refund, a later Cluster slot)
			this.deadlines.observe(invocation.slot(), invocation.preparedNanos(), System.nanoTime(), time);
		}
		return reply;
	}

}
