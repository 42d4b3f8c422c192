package io.github.ratelimit.internal.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.UncategorizedSQLException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.SQLExceptionSubclassTranslator;
import org.springframework.jdbc.support.SQLExceptionTranslator;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.BucketKey;

/**
 * Bucket states in one PostgreSQL table, changed in transactions that lock the buckets'
 * rows: {@link io.github.ratelimit.store.RateLimitStores#atomic} makes it a complete
 * store, whose decisions every application instance sharing the database agrees on.
 * <p>
 * The table ({@code ratelimit_bucket} unless {@linkplain Builder#table named}) has one row
 * per bucket: {@code id bytea PRIMARY KEY}, the SHA-256 of the limit name, a 0 byte and
 * the identity, so that ids have one size whatever a client sends and no identity can
 * name another's bucket; {@code state bytea}, as ratelimit-core encodes it; and
 * {@code expires_at bigint}, the database time in microseconds after which the state no
 * longer matters. Nothing else is indexed, and each page keeps room for new versions
 * ({@code fillfactor = 90}): every decision rewrites {@code state} and
 * {@code expires_at}, which then stays a heap-only update, with no index entry to add;
 * {@link #removeExpired} scans for old rows instead, in the background and a batch at a
 * time. {@link #createSchema()} runs the packaged script
 * {@code io/github/ratelimit/internal/jdbc/schema-postgresql.sql}.
 * <p>
 * Time is the database's ({@code clock_timestamp()}), so instances whose clocks differ
 * still decide on one clock.
 * <p>
 * An {@link #update} is one transaction on a connection of its own, taken from the data
 * source and never the caller's (a rolled-back business transaction must not give tokens
 * back, and a long one must not hold a bucket's row), in three round trips whatever the
 * number of limits:
 * <ol>
 * <li>one {@code SELECT … ORDER BY id FOR UPDATE} that locks the rows of every key, in
 * the order of their ids, so that two requests never wait for each other in a cycle, and
 * reads the database's time once each row is locked. Locking writes no row version, so
 * the state's write that follows is the only one, and a heap-only one (the table indexes
 * nothing that changes). A bucket seen for the first time has no row to lock yet: one
 * more statement, {@code INSERT … ON CONFLICT (id) DO UPDATE … RETURNING} over every key
 * in the order of their ids, creates the missing rows and locks the others, so that two
 * requests deciding a new bucket never both find it absent. When some rows were found
 * and some not, the transaction first gives back the locks it holds (one more round
 * trip), so that every lock is still taken in the ids' order. The time is the latest
 * read with the rows;</li>
 * <li>one {@code UPDATE} writing every state the body wrote, skipped when it wrote none
 * (a rejected request);</li>
 * <li>the commit.</li>
 * </ol>
 * A charged request therefore takes three round trips and a rejected one two; a request
 * whose buckets are all new takes one more, and one with new and old buckets two more. The statements are built once per number of keys and
 * run on plain JDBC (the driver prepares them on the server once they repeat), with
 * failures translated to Spring's {@link org.springframework.dao.DataAccessException}, a
 * {@link RuntimeException}, for the failover decorator to catch. {@link #read} is one
 * plain {@code SELECT}: it neither locks nor creates a row.
 */
public final class JdbcStateStorage implements AtomicStateStorage {

	private static final int MAINTENANCE_TIMEOUT_SECONDS = 60;

	/** The table's name unless {@link Builder#table} names another. */
	public static final String DEFAULT_TABLE = "ratelimit_bucket";

	private final JdbcStatements sql;

	private final DataSource dataSource;

	private final int queryTimeoutSeconds;

	private final long timeoutNanos;

	private final SQLExceptionTranslator translator = new SQLExceptionSubclassTranslator();

	private final JdbcTemplate jdbc;

	private final TransactionTemplate lockingTransaction;

	private final TransactionTemplate outsideTransaction;

	private JdbcStateStorage(Builder builder) {
		this.sql = new JdbcStatements(builder.table);
		this.dataSource = builder.dataSource;
		this.queryTimeoutSeconds = (builder.timeout != null) ? seconds(builder.timeout) : 0;
		this.timeoutNanos = (builder.timeout != null) ? builder.timeout.toNanos() : 0;
		this.jdbc = new JdbcTemplate(builder.dataSource);
		// maintenance runs in the background (cleanup) or on demand (reset, schema), and
		// scans: it gets more than a decision's time, still bounded
		this.jdbc.setQueryTimeout((this.queryTimeoutSeconds > 0)
				? Math.max(this.queryTimeoutSeconds, MAINTENANCE_TIMEOUT_SECONDS) : 0);
		DataSourceTransactionManager transactions = new DataSourceTransactionManager(builder.dataSource);
		this.lockingTransaction = new TransactionTemplate(transactions);
		this.lockingTransaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		// single statements run in auto-commit, also on a connection of their own rather
		// than in a caller's transaction that happens to hold one
		this.outsideTransaction = new TransactionTemplate(transactions);
		this.outsideTransaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
	}

	/**
	 * Starts building a storage over a data source.
	 * @param dataSource connections to a PostgreSQL database
	 * @return a builder
	 */
	public static Builder builder(DataSource dataSource) {
		return new Builder(dataSource);
	}

	@Override
	public <T> T update(List<BucketKey> keys, Function<Transaction, T> body) {
		byte[][] ids = ids(keys);
		return withConnection("lock and write rate limit buckets", true, (connection) -> {
			long due = System.nanoTime() + this.timeoutNanos;
			Step step = new Step(ids, due);
			int found = query(connection, this.sql.lock(ids.length), ids, step);
			if (found < ids.length) {
				if (found > 0) {
					// creating the missing rows now would lock them after the ones held, out of
					// the ids' order, and two requests could each wait for the other: give the
					// locks back and take them all again in order
					connection.rollback();
					step = new Step(ids, due);
				}
				query(connection, this.sql.create(ids.length), step.sortedIds(), step);
			}
			T answer = body.apply(step);
			step.writeBack(connection);
			return answer;
		});
	}

	@Override
	public <T> T read(List<BucketKey> keys, Function<Transaction, T> body) {
		byte[][] ids = ids(keys);
		Step step = withConnection("read rate limit buckets", false, (connection) -> {
			Step read = new Step(ids, System.nanoTime() + this.timeoutNanos);
			query(connection, this.sql.read(ids.length), ids, read);
			return read;
		});
		// what the body writes is discarded: inspecting changes nothing
		return body.apply(step);
	}

	@Override
	public boolean delete(BucketKey key) {
		byte[] id = id(key);
		Boolean held = this.outsideTransaction.execute((status) -> this.jdbc.query(this.sql.delete(),
				(PreparedStatement statement) -> statement.setBytes(1, id),
				(ResultSet rows) -> rows.next() && rows.getLong(1) > rows.getLong(2)));
		return Boolean.TRUE.equals(held);
	}

	@Override
	public void deleteAll() {
		this.outsideTransaction.executeWithoutResult((status) -> this.jdbc.update(this.sql.deleteAll()));
	}

	/**
	 * Returns {@code jdbc}, what metrics, health and the actuator endpoint call this store.
	 * @return {@code jdbc}
	 */
	@Override
	public String name() {
		return "jdbc";
	}

	/**
	 * Creates the table and its index unless they exist, with the packaged script; running
	 * it again changes nothing.
	 */
	public void createSchema() {
		this.outsideTransaction.executeWithoutResult((status) -> this.sql.schema().forEach(this.jdbc::execute));
	}

	/**
	 * Deletes at most {@code batchSize} rows whose states expired by the database's time,
	 * the first a scan finds, skipping rows a decision holds now: it never waits for them. Call it
	 * until it answers less than the batch size to remove every expired row.
	 * @param batchSize most rows to delete, so that one call's transaction stays short
	 * @return how many rows it deleted
	 */
	public int removeExpired(int batchSize) {
		if (batchSize <= 0) {
			throw new IllegalArgumentException("batchSize must be positive: " + batchSize);
		}
		Integer removed = this.lockingTransaction
			.execute((status) -> this.jdbc.update(this.sql.removeExpired(), batchSize));
		return (removed != null) ? removed : 0;
	}

	/**
	 * Counts the rows the table holds now, expired or not.
	 * @return the number of rows
	 */
	public long size() {
		Long count = this.outsideTransaction
			.execute((status) -> this.jdbc.queryForObject(this.sql.size(), Long.class));
		return (count != null) ? count : 0;
	}

	/**
	 * The table this storage keeps its rows in.
	 * @return the table's name, as configured
	 */
	public String table() {
		return this.sql.table();
	}

	/**
	 * The id of a bucket's row: SHA-256 of the limit name, a 0 byte and the identity, in
	 * UTF-8. The separator keeps ({@code "a"}, {@code "b|c"}) and ({@code "a|b"},
	 * {@code "c"}) apart.
	 */
	static byte[] id(BucketKey key) {
		MessageDigest digest = sha256();
		digest.update(key.limitName().getBytes(StandardCharsets.UTF_8));
		digest.update((byte) 0);
		digest.update(key.identity().getBytes(StandardCharsets.UTF_8));
		return digest.digest();
	}

	/**
	 * Runs work on a connection of its own from the data source, in a transaction of its
	 * own when asked (committed when the work returns, rolled back when it throws), and
	 * gives the connection back as it found it.
	 */
	private <T> T withConnection(String task, boolean transaction, JdbcTransactions.SqlWork<T> work) {
		try (Connection connection = this.dataSource.getConnection()) {
			// each statement gets what is left of the timeout as its network timeout (see
			// Step#bound); the connection's own is put back, whatever pool lent it
			int networkTimeout = (this.timeoutNanos > 0) ? connection.getNetworkTimeout() : 0;
			try {
				return JdbcTransactions.run(connection, transaction, work);
			}
			finally {
				if (this.timeoutNanos > 0) {
					connection.setNetworkTimeout(Runnable::run, networkTimeout);
				}
			}
		}
		catch (SQLException ex) {
			DataAccessException translated = this.translator.translate(task, null, ex);
			throw (translated != null) ? translated : new UncategorizedSQLException(task, null, ex);
		}
	}

	/** Runs a query whose parameters are the ids, handing each row to the step. */
	private int query(Connection connection, String sql, byte[][] ids, Step step) throws SQLException {
		step.bound(connection);
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			for (int i = 0; i < ids.length; i++) {
				statement.setBytes(i + 1, ids[i]);
			}
			int rows = 0;
			try (ResultSet result = statement.executeQuery()) {
				while (result.next()) {
					step.readRow(result);
					rows++;
				}
			}
			return rows;
		}
	}

	private static byte[][] ids(List<BucketKey> keys) {
		byte[][] ids = new byte[keys.size()][];
		for (int i = 0; i < ids.length; i++) {
			ids[i] = id(keys.get(i));
		}
		return ids;
	}

	private static MessageDigest sha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java runtime has SHA-256", ex);
		}
	}

	/** A JDBC statement timeout: whole seconds, rounded up so that a short timeout is not none. */
	static int seconds(Duration timeout) {
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("timeout must be positive: " + timeout);
		}
		long seconds = timeout.getSeconds() + ((timeout.getNano() > 0) ? 1 : 0);
		return (int) Math.min(seconds, Integer.MAX_VALUE);
	}

	/**
	 * The rows one call read, and what its body wrote.
	 */
	private final class Step implements Transaction {

		private final byte[][] ids;

		private final byte[] @Nullable [] states;

		private final long[] expiries;

		private final byte[] @Nullable [] written;

		private final long[] writtenExpiries;

		private final long dueNanos;

		private long now = Long.MIN_VALUE;

		Step(byte[][] ids, long dueNanos) {
			this.ids = ids;
			this.dueNanos = dueNanos;
			this.states = new byte[ids.length][];
			this.expiries = new long[ids.length];
			this.written = new byte[ids.length][];
			this.writtenExpiries = new long[ids.length];
		}

		/**
		 * Gives the connection's reads what is left of the step's time, so that a database
		 * that answers slowly cannot hold the caller a network timeout per statement.
		 */
		void bound(Connection connection) throws SQLException {
			if (JdbcStateStorage.this.timeoutNanos > 0) {
				long left = TimeUnit.NANOSECONDS.toMillis(this.dueNanos - System.nanoTime());
				connection.setNetworkTimeout(Runnable::run, (int) Math.max(1, Math.min(Integer.MAX_VALUE, left)));
			}
		}

		/** One row: id, state, expiry and the database's time. */
		void readRow(ResultSet row) throws SQLException {
			int index = indexOf(row.getBytes(1));
			this.states[index] = row.getBytes(2);
			this.expiries[index] = row.getLong(3);
			// the latest of the rows' times, each read once its row's last write was committed
			this.now = Math.max(this.now, row.getLong(4));
		}

		/** Every id, in the order the database sorts them ({@code bytea}: unsigned bytes). */
		byte[][] sortedIds() {
			byte[][] sorted = this.ids.clone();
			Arrays.sort(sorted, Arrays::compareUnsigned);
			return sorted;
		}

		private int indexOf(byte[] id) {
			for (int i = 0; i < this.ids.length; i++) {
				if (Arrays.equals(this.ids[i], id)) {
					return i;
				}
			}
			throw new IllegalStateException("The database answered a row that was not asked for");
		}

		@Override
		public long nowMicros() {
			return this.now;
		}

		@Override
		public byte @Nullable [] state(int index) {
			byte[] state = this.states[index];
			return (state != null && this.expiries[index] > this.now) ? state.clone() : null;
		}

		@Override
		public void write(int index, byte[] state, long expiresAtMicros) {
			this.written[index] = state.clone();
			this.writtenExpiries[index] = expiresAtMicros;
		}

		void writeBack(Connection connection) throws SQLException {
			int rows = 0;
			for (byte[] state : this.written) {
				rows += (state != null) ? 1 : 0;
			}
			if (rows == 0) {
				return;
			}
			bound(connection);
			try (PreparedStatement statement = connection.prepareStatement(JdbcStateStorage.this.sql.write(rows))) {
				int parameter = 1;
				for (int i = 0; i < this.ids.length; i++) {
					byte[] state = this.written[i];
					if (state == null) {
						continue;
					}
					if (rows == 1) {
						statement.setBytes(parameter++, state);
						statement.setLong(parameter++, this.writtenExpiries[i]);
						statement.setBytes(parameter++, this.ids[i]);
					}
					else {
						statement.setBytes(parameter++, this.ids[i]);
						statement.setBytes(parameter++, state);
						statement.setLong(parameter++, this.writtenExpiries[i]);
					}
				}
				statement.executeUpdate();
			}
		}

	}

	/**
	 * Builds a {@link JdbcStateStorage}.
	 */
	public static final class Builder {

		private final DataSource dataSource;

		private String table = DEFAULT_TABLE;

		private @Nullable Duration timeout;

		private Builder(DataSource dataSource) {
			this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
		}

		/**
		 * Keeps the rows in this table instead of {@value JdbcStateStorage#DEFAULT_TABLE}.
		 * @param table a plain SQL identifier (letters, digits and {@code _}), optionally
		 * schema-qualified ({@code schema.table})
		 * @return this builder
		 * @throws IllegalArgumentException when the name is anything else
		 */
		public Builder table(String table) {
			this.table = JdbcStatements.requireIdentifier(table);
			return this;
		}

		/**
		 * Bounds each decision by this long: what is left of it is the network timeout of
		 * each of its statements (a database that stops answering fails the read), and the
		 * connection's own network timeout is put back afterwards. The other statements
		 * (cleanup, reset, schema) get a statement timeout of this long rounded up to whole
		 * seconds, at least a minute. Decisions set no statement timeout: the driver would
		 * start a timer for each statement.
		 * @param timeout the timeout
		 * @return this builder
		 */
		public Builder timeout(Duration timeout) {
			seconds(Objects.requireNonNull(timeout, "timeout must not be null"));
			this.timeout = timeout;
			return this;
		}

		/**
		 * Builds the storage; the table must exist ({@link JdbcStateStorage#createSchema()}).
		 * @return the storage
		 */
		public JdbcStateStorage build() {
			return new JdbcStateStorage(this);
		}

	}

}
