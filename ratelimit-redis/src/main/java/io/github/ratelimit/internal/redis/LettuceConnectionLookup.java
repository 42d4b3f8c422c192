package io.github.ratelimit.internal.redis;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Finds the asynchronous commands of the factory's shared connection. The factory opens
 * its shared connection on first use and blocks while it does (up to the connect and
 * command timeouts, 60 seconds by default, when Redis hangs); the connection is therefore
 * looked up on a thread of its own, and calls wait for it within their timeout. Its
 * commands are then kept, not looked up again per call (which takes the factory's lock),
 * until a call fails and {@link #forget() forgets} them.
 */
final class LettuceConnectionLookup {

	private final LettuceConnectionFactory connectionFactory;

	private final AtomicReference<CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>>> lookup = new AtomicReference<>();

	/** The shared connection's commands, or {@code null} until looked up (again). */
	private volatile RedisClusterAsyncCommands<byte[], byte[]> shared;

	LettuceConnectionLookup(LettuceConnectionFactory connectionFactory) {
		this.connectionFactory = connectionFactory;
	}

	/** The shared connection's commands when known, else {@code null}. */
	RedisClusterAsyncCommands<byte[], byte[]> known() {
		return this.shared;
	}

	/** Looks the connection up again, through the factory, which may have replaced it. */
	void forget() {
		this.shared = null;
	}

	/** A connection of the factory's own, for a factory that does not share one. */
	RedisConnection lend() {
		return this.connectionFactory.getConnection();
	}

	/**
	 * The shared connection's commands, looked up if not known yet.
	 * @param deadline {@link System#nanoTime()} after which the caller stops waiting
	 * @return the commands, or {@code null} when the factory does not share a connection
	 */
	RedisClusterAsyncCommands<byte[], byte[]> await(long deadline) {
		RedisClusterAsyncCommands<byte[], byte[]> known = this.shared;
		if (known != null) {
			return known;
		}
		CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> attempt = this.lookup.get();
		if (attempt == null || attempt.isCompletedExceptionally()
				|| (attempt.isDone() && this.shared == null && attempt.getNow(null) != null)) {
			CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> next = new CompletableFuture<>();
			if (this.lookup.compareAndSet(attempt, next)) {
				Thread connector = new Thread(() -> connect(next), "ratelimit-redis-connect");
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
			throw new RedisSystemException("Could not connect to Redis: " + ex.getCause().getMessage(), ex.getCause());
		}
	}

	private void connect(CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> next) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			RedisClusterAsyncCommands<byte[], byte[]> commands = this.connectionFactory.getShareNativeConnection()
					? nativeCommands(connection) : null;
			this.shared = commands;
			next.complete(commands);
		}
		catch (Throwable ex) {
			// whatever it is, the calls waiting for it must learn of it
			next.completeExceptionally(ex);
		}
	}

	@SuppressWarnings("unchecked")
	static RedisClusterAsyncCommands<byte[], byte[]> nativeCommands(RedisConnection connection) {
		return (RedisClusterAsyncCommands<byte[], byte[]>) connection.getNativeConnection();
	}

}
