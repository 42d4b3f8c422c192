package io.github.ratelimit.internal.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.internal.core.AlgorithmSpec;
import io.github.ratelimit.internal.redis.RedisTestCluster.HostAndPort;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The store with a per-call timeout (as configured by the starter) runs its script as a
 * Redis function: loaded on first use, on every primary of a cluster, loaded again when
 * Redis lost it, and replaced by the script (EVALSHA) for a server or a user that runs no
 * functions. State the library keeps between calls must not carry one call's arguments
 * into the next.
 */
class RedisFunctionsTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(2);

	private static final Pattern CALLS = Pattern.compile("^calls=(\\d+)");

	private static final RateLimit LIMIT = RateLimit.of("functions", Algorithm.TOKEN_BUCKET, 5, Duration.ofHours(1));

	private static final String FUNCTION = RedisScripts
		.acquireFunction(List.of(AlgorithmSpec.of(Algorithm.TOKEN_BUCKET)))
		.name();

	@Test
	void decidesThroughAFunctionLoadedOnFirstUseAndAgainWhenRedisLostIt() {
		redis("FUNCTION", "FLUSH");
		withStore("functions:", (store) -> {
			long scripts = scriptCalls();
			long functions = calls("fcall");
			assertThat(remaining(store.tryAcquire(acquire("user:alice")))).isEqualTo(4);
			assertThat(String.valueOf(redis("FUNCTION", "LIST"))).contains(FUNCTION);
			assertThat(remaining(store.tryAcquireAsync(acquire("user:alice"), 0).toCompletableFuture().join()))
				.isEqualTo(3);
			// Redis restarted without its functions: loaded again, the bucket kept
			redis("FUNCTION", "FLUSH");
			assertThat(remaining(store.tryAcquireAsync(acquire("user:alice"), 0).toCompletableFuture().join()))
				.isEqualTo(2);
			redis("FUNCTION", "FLUSH");
			assertThat(remaining(store.tryAcquire(acquire("user:alice")))).isEqualTo(1);
			// four decisions, three of them on a server without the function: one call
			// refused (not found) before each of those
			assertThat(calls("fcall") - functions).isEqualTo(7);
			assertThat(scriptCalls()).isEqualTo(scripts);
		});
	}

	@Test
	void callsThatMissTheLibraryTogetherLoadItOnce() {
		withStore("together:", (store) -> {
			// the connection known, then the library gone
			assertThat(store.tryAcquire(acquire("user:erin")).allowed()).isTrue();
			redis("FUNCTION", "FLUSH");
			long loads = calls("function|load");
			List<CompletableFuture<RateLimitResult>> calls = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				calls.add(store.tryAcquireAsync(acquire("user:frank" + i), 0).toCompletableFuture());
			}
			// the eight misses come back, in order, before the reply to the load the first sent
			assertThat(calls).allSatisfy((call) -> assertThat(remaining(call.join())).isEqualTo(4));
			assertThat(calls("function|load") - loads).isEqualTo(1);
		});
	}

	@Test
	void aKeyTheUserMayNotTouchLeavesFunctionsOn() {
		String prefix = "acl-keys:" + System.nanoTime() + ":";
		asUser("some-keys", new String[] { "~other:*", "+@all" }, prefix, (store) -> {
			assertThatExceptionOfType(RuntimeException.class).isThrownBy(() -> store.tryAcquire(acquire("user:gina")))
				.withStackTraceContaining("NOPERM");
			redis("ACL", "SETUSER", "some-keys", "~" + prefix + "*");
			long functions = calls("fcall");
			long scripts = scriptCalls();
			assertThat(remaining(store.tryAcquire(acquire("user:gina")))).isEqualTo(4);
			// still through the function (loaded first if an earlier test flushed it), no script
			assertThat(calls("fcall")).isGreaterThan(functions);
			assertThat(scriptCalls()).isEqualTo(scripts);
		});
	}

	@Test
	void aLoadThatFailsSendsThatCallAsAScriptAndLeavesFunctionsOn() {
		// a server of its own: over its memory limit, it would fail the other tests' writes
		try (RedisTestServer server = RedisTestServer.start()) {
			String host = server.host();
			int port = server.port();
			withStore(server.connectionFactory(), "failed-load:", (store) -> {
				long scripts = scriptCalls(host, port);
				command(host, port, "CONFIG", "SET", "maxmemory", "1");
				try {
					// Redis refuses FUNCTION LOAD when over maxmemory; the script runs instead,
					// and fails at its first write for the same reason
					assertThatExceptionOfType(RuntimeException.class)
						.isThrownBy(() -> store.tryAcquire(acquire("user:hank")))
						.withStackTraceContaining("OOM");
				}
				finally {
					command(host, port, "CONFIG", "SET", "maxmemory", "0");
				}
				assertThat(String.valueOf(command(host, port, "FUNCTION", "LIST"))).doesNotContain(FUNCTION);
				assertThat(scriptCalls(host, port)).isGreaterThan(scripts);
				// the next call loads the library and decides through it, no script
				long scriptsAfter = scriptCalls(host, port);
				assertThat(remaining(store.tryAcquire(acquire("user:hank")))).isEqualTo(4);
				assertThat(String.valueOf(command(host, port, "FUNCTION", "LIST"))).contains(FUNCTION);
				assertThat(scriptCalls(host, port)).isEqualTo(scriptsAfter);
			});
		}
	}

	@Test
	void preloadingLoadsTheLibrariesAheadOfTheFirstRequest() {
		redis("FUNCTION", "FLUSH");
		withStore("preload:", (store) -> {
			store.preload();
			String libraries = String.valueOf(redis("FUNCTION", "LIST"));
			for (AlgorithmSpec spec : AlgorithmSpec.all()) {
				assertThat(libraries).contains(RedisScripts.acquireFunction(List.of(spec)).name());
			}
			long functions = calls("fcall");
			assertThat(remaining(store.tryAcquire(acquire("user:dave")))).isEqualTo(4);
			// no call refused for a missing function
			assertThat(calls("fcall") - functions).isEqualTo(1);
		});
	}

	@Test
	void runsTheScriptForAUserThatMayNotCallFunctions() {
		asUser("scripts-only", new String[] { "~*", "+@all", "-fcall", "-function" },
				"scripts:" + System.nanoTime() + ":", (store) -> {
					// a user that may not load functions: preloading loads the scripts alone
					store.preload();
					long scripts = calls("evalsha");
					for (long expected = 4; expected >= 0; expected--) {
						assertThat(remaining(store.tryAcquire(acquire("user:bob")))).isEqualTo(expected);
					}
					assertThat(store.tryAcquireAsync(acquire("user:bob"), 0).toCompletableFuture().join().allowed())
						.isFalse();
					// a script for every decision, loaded ahead
					assertThat(calls("evalsha") - scripts).isEqualTo(6);
				});
	}

	@Test
	void aCallDoesNotInheritTheBucketFieldsOfTheCallBefore() {
		LettuceConnectionFactory factory = RedisTestServer.shared().connectionFactory();
		try {
			String prefix = "fields:" + System.nanoTime() + ":";
			RedisRateLimitStore hashed = RedisRateLimitStore.builder(factory)
				.keyPrefix(prefix + "h:")
				.timeout(TIMEOUT)
				.layout(RedisKeyLayout.HASH_PER_SLOT)
				.build();
			RedisRateLimitStore keyed = RedisRateLimitStore.builder(factory)
				.keyPrefix(prefix + "k:")
				.timeout(TIMEOUT)
				.layout(RedisKeyLayout.KEY_PER_BUCKET)
				.build();
			Acquisition carol = new Acquisition(LIMIT, "user:carol", 1);
			// the same library serves both: the first call names a field for its bucket
			assertThat(hashed.tryAcquire(List.of(carol)).allowed()).isTrue();
			assertThat(hashed.field(carol)).isEqualTo("user:carol");
			assertThat(keyed.tryAcquire(List.of(carol)).allowed()).isTrue();
			assertThat(keyed.field(carol)).isNull();
			// the second bucket is a key of its own, not a field of a hash under its key
			assertThat(redis("TYPE", keyed.key(carol))).isEqualTo("string");
			assertThat(redis("TYPE", hashed.key(carol))).isEqualTo("hash");
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void loadsTheLibraryOnEveryPrimaryOfACluster() {
		RedisTestCluster cluster = RedisTestCluster.shared();
		for (HostAndPort master : cluster.masters()) {
			command(master.host(), master.port(), "FUNCTION", "FLUSH");
		}
		withStore(cluster.connectionFactory(), "functions:", (store) -> {
			long before = 0;
			for (HostAndPort master : cluster.masters()) {
				before += calls(master.host(), master.port(), "fcall");
			}
			// identities in slots of every primary
			for (int i = 0; i < 30; i++) {
				assertThat(remaining(store.tryAcquire(acquire("user:u" + i)))).isEqualTo(4);
			}
			long after = 0;
			for (HostAndPort master : cluster.masters()) {
				assertThat(String.valueOf(command(master.host(), master.port(), "FUNCTION", "LIST"))).as("%s", master)
					.contains(FUNCTION);
				after += calls(master.host(), master.port(), "fcall");
			}
			// one refused call (the function not found), then one call per decision
			assertThat(after - before).isEqualTo(31);
		});
	}

	/** Runs {@code test} on a store of its own on the shared server, as the starter builds it. */
	private static void withStore(String prefix, Consumer<RedisRateLimitStore> test) {
		withStore(RedisTestServer.shared().connectionFactory(), prefix + System.nanoTime() + ":", test);
	}

	private static void withStore(LettuceConnectionFactory factory, String prefix, Consumer<RedisRateLimitStore> test) {
		try {
			test.accept(RedisRateLimitStore.builder(factory).keyPrefix(prefix).timeout(TIMEOUT).build());
		}
		finally {
			factory.destroy();
		}
	}

	/**
	 * Runs {@code test} on a store connecting to the shared server as an ACL user with
	 * these rules, deleted afterwards.
	 */
	private static void asUser(String user, String[] rules, String prefix, Consumer<RedisRateLimitStore> test) {
		List<String> setUser = new ArrayList<>(List.of("ACL", "SETUSER", user, "reset", "on", ">secret"));
		setUser.addAll(List.of(rules));
		redis(setUser.toArray(String[]::new));
		RedisTestServer server = RedisTestServer.shared();
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(server.host(), server.port());
		configuration.setUsername(user);
		configuration.setPassword("secret");
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder()
					.clientResources(RedisTestSupport.clientResources())
					.commandTimeout(TIMEOUT)
					.shutdownQuietPeriod(Duration.ZERO)
					.build());
		factory.afterPropertiesSet();
		factory.start();
		try {
			withStore(factory, prefix, test);
		}
		finally {
			redis("ACL", "DELUSER", user);
		}
	}

	private static List<Acquisition> acquire(String identity) {
		return List.of(new Acquisition(LIMIT, identity, 1));
	}

	private static long remaining(RateLimitResult result) {
		return result.decisions().get(0).remaining();
	}

	/** EVALSHA and EVAL calls the shared server counted. */
	private static long scriptCalls() {
		RedisTestServer server = RedisTestServer.shared();
		return scriptCalls(server.host(), server.port());
	}

	private static long scriptCalls(String host, int port) {
		return calls(host, port, "evalsha") + calls(host, port, "eval");
	}

	/** Calls of a command the shared server counted, failed ones included. */
	private static long calls(String command) {
		RedisTestServer server = RedisTestServer.shared();
		return calls(server.host(), server.port(), command);
	}

	private static long calls(String host, int port, String command) {
		String field = RedisTestSupport.field(command(host, port, "INFO", "commandstats"), "cmdstat_" + command);
		if (field == null) {
			return 0;
		}
		Matcher matcher = CALLS.matcher(field);
		assertThat(matcher.find()).as(field).isTrue();
		return Long.parseLong(matcher.group(1));
	}

	/** A command to the shared server. */
	private static Object redis(String... args) {
		RedisTestServer server = RedisTestServer.shared();
		return command(server.host(), server.port(), args);
	}

	private static Object command(String host, int port, String... args) {
		try {
			return RedisTestSupport.command(host, port, TIMEOUT, args);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
