package io.github.ratelimit.internal.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Runs the script through Lettuce's asynchronous API on the application's shared
 * connection ({@link LettuceConnectionLookup}), so that each call waits at most the
 * configured timeout whatever the connection's command timeout is. The script runs as a
 * Redis function (FCALL), which Redis defines once rather than on every call; the library
 * is loaded (FUNCTION LOAD, on every primary of a cluster) when the server answers that
 * it does not have it. A server that runs no functions (before Redis 7, or an ACL user
 * that may not call or load them) gets EVALSHA from then on, and EVAL when it lost the
 * script.
 */
final class LettuceScriptExecutor implements ScriptExecutor {

	private final LettuceConnectionLookup connection;

	private final long timeoutNanos;

	private final AsyncOffload offload;

	/** Whether scripts run as Redis functions; cleared for good when the server runs none. */
	private volatile boolean functions;

	/** Libraries being loaded, by function name. */
	private final Map<String, CompletableFuture<Object>> loads = new ConcurrentHashMap<>();

	/**
	 * Creates an executor.
	 * @param connectionFactory the application's connection factory
	 * @param timeout the longest a call waits
	 * @param functions whether scripts run as Redis functions where the server runs them
	 * @param offload where calls wait that cannot be sent at once
	 */
	LettuceScriptExecutor(LettuceConnectionFactory connectionFactory, Duration timeout, boolean functions,
			AsyncOffload offload) {
		this.connection = new LettuceConnectionLookup(connectionFactory);
		this.timeoutNanos = timeout.toNanos();
		this.functions = functions;
		this.offload = offload;
	}

	@Override
	public List<?> execute(Script script, byte[][] keys, byte[][] args) {
		long deadline = System.nanoTime() + this.timeoutNanos;
		RedisClusterAsyncCommands<byte[], byte[]> commands = this.connection.await(deadline);
		if (commands != null) {
			try {
				return execute(commands, script, keys, args, deadline);
			}
			catch (RuntimeException ex) {
				this.connection.forget();
				throw ex;
			}
		}
		// a factory that does not share its connection lends one per call
		try (RedisConnection lent = this.connection.lend()) {
			return execute(LettuceConnectionLookup.nativeCommands(lent), script, keys, args, deadline);
		}
	}

	/**
	 * Sends the script without waiting for its reply; fails with
	 * {@link QueryTimeoutException} after the timeout. Before the shared connection is
	 * known, and with a factory that lends a connection per call, the call waits for it on
	 * a pool thread.
	 */
	CompletableFuture<List<?>> executeAsync(Script script, byte[][] keys, byte[][] args) {
		RedisClusterAsyncCommands<byte[], byte[]> commands = this.connection.known();
		if (commands == null) {
			return this.offload.supply(() -> execute(script, keys, args));
		}
		CompletableFuture<List<?>> reply = new CompletableFuture<>();
		send(commands, script, keys, args, reply);
		return reply.orTimeout(this.timeoutNanos, TimeUnit.NANOSECONDS).handle((value, failure) -> {
			if (failure == null) {
				return value;
			}
			this.connection.forget();
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
		RedisClusterAsyncCommands<byte[], byte[]> commands = this.connection.await(deadline);
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
					recover(commands, new Sent(script, keys, args), reply, failure);
				}
			});
	}

	/**
	 * After a failed FCALL: loads the library and calls again when Redis lacks it, sends
	 * the script when the server runs no functions, else fails.
	 */
	private void recover(RedisClusterAsyncCommands<byte[], byte[]> commands, Sent sent,
			CompletableFuture<List<?>> reply, Throwable failure) {
		Script script = sent.script();
		if (!isMissingFunction(unwrap(failure))) {
			if (runsNoFunctions(unwrap(failure))) {
				this.functions = false;
				sendScript(commands, script, sent.keys(), sent.args(), reply);
			}
			else {
				reply.completeExceptionally(failure);
			}
			return;
		}
		loadOnce(commands, script).whenComplete((loaded, notLoaded) -> {
			if (notLoaded == null) {
				commands.<List<Object>>fcall(script.function(), ScriptOutputType.MULTI, sent.keys(), sent.args())
					.whenComplete((again, failed) -> complete(reply, again, failed));
			}
			else {
				// refused for good, or not loaded this time (a primary of a cluster failing
				// over, Redis out of memory): the script, which needs its own node only
				if (runsNoFunctions(unwrap(notLoaded))) {
					this.functions = false;
				}
				sendScript(commands, script, sent.keys(), sent.args(), reply);
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
		return message.startsWith("ERR unknown command")
				|| (message.startsWith("NOPERM") && (message.contains("'fcall'") || message.contains("'function")));
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
	 * Waits for the call the asynchronous path would send, as directly: FCALL (or EVALSHA)
	 * awaited as it is, the loading and the fallback after a failure left to the
	 * asynchronous path.
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
			recover(commands, new Sent(script, keys, args), reply, failure);
			return await(reply, deadline);
		}
		try {
			return await(commands.evalsha(script.sha(), ScriptOutputType.MULTI, keys, args), deadline);
		}
		catch (RedisNoScriptException ex) {
			return await(commands.eval(script.bytes(), ScriptOutputType.MULTI, keys, args), deadline);
		}
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

	/** A call as sent: the script, its keys and arguments. */
	private record Sent(Script script, byte[][] keys, byte[][] args) {
	}

}
