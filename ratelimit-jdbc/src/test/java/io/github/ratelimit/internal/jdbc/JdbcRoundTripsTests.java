package io.github.ratelimit.internal.jdbc;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.store.RateLimitStores;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How many times a decision goes to the database, counted at the JDBC calls that do: a
 * charged request locks, writes and commits whatever the number of its limits, a
 * rejected one writes nothing, and inspecting is one query.
 */
class JdbcRoundTripsTests {

	private static final Set<String> ROUND_TRIPS = Set.of("execute", "executeQuery", "executeUpdate",
			"executeLargeUpdate", "executeBatch", "commit", "rollback");

	private static final List<String> calls = new CopyOnWriteArrayList<>();

	private static RateLimitStore store;

	private static JdbcStateStorage storage;

	private final List<RateLimit> limits = List.of(RateLimit.of("a", Algorithm.TOKEN_BUCKET, 1, Duration.ofHours(1)),
			RateLimit.of("b", Algorithm.SLIDING_WINDOW_COUNTER, 5, Duration.ofHours(1)),
			RateLimit.of("c", Algorithm.FIXED_WINDOW, 5, Duration.ofHours(1)));

	private final List<Acquisition> request = this.limits.stream()
		.map((limit) -> new Acquisition(limit, "client", 1))
		.toList();

	@BeforeAll
	static void createStore() {
		storage = JdbcStateStorage.builder(counting(PostgresTestServer.shared().dataSource()))
			.table("ratelimit_round_trips")
			.build();
		storage.createSchema();
		store = RateLimitStores.atomic(storage);
	}

	@BeforeEach
	void empty() {
		storage.deleteAll();
		calls.clear();
	}

	@Test
	void aChargedRequestLocksWritesAndCommitsWhateverItsLimits() {
		assertThat(store.tryAcquire(this.request).allowed()).isTrue();
		assertThat(calls).containsExactly("executeQuery", "executeUpdate", "commit");
	}

	@Test
	void aRejectedRequestWritesNothing() {
		store.tryAcquire(this.request);
		calls.clear();
		assertThat(store.tryAcquire(this.request).allowed()).isFalse();
		assertThat(calls).containsExactly("executeQuery", "commit");
	}

	@Test
	void inspectingIsOneQuery() {
		store.inspect(this.limits.get(0), "client");
		assertThat(calls).containsExactly("executeQuery");
		assertThat(storage.size()).isZero();
	}

	/** A data source whose connections record each call that goes to the database. */
	private static DataSource counting(DataSource target) {
		return proxy(DataSource.class, target);
	}

	@SuppressWarnings("unchecked")
	private static <T> T proxy(Class<T> type, Object target) {
		InvocationHandler handler = (self, method, arguments) -> {
			if (ROUND_TRIPS.contains(method.getName())) {
				calls.add(method.getName());
			}
			try {
				Object answer = method.invoke(target, arguments);
				if (answer instanceof Connection connection) {
					return proxy(Connection.class, connection);
				}
				if (answer instanceof Statement statement) {
					return proxy((Class<Statement>) method.getReturnType(), statement);
				}
				return answer;
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
		};
		return (T) Proxy.newProxyInstance(JdbcRoundTripsTests.class.getClassLoader(), new Class<?>[] { type },
				handler);
	}

}
