package io.github.ratelimit.benchmarks.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

import javax.sql.DataSource;

import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.BucketKey;

/**
 * A sketch of the PostgreSQL storage with the changes the PostgreSQL results suggest, to
 * measure them through the same store beside the real one ({@code --limiters proto}): it
 * locks existing rows with {@code SELECT ... FOR UPDATE}, which writes no row version, and
 * creates missing rows only when the lock finds fewer rows than keys (rolling back first, so
 * that locks are always taken in the ids' order); its table has no index on
 * {@code expires_at}, so that state writes can be heap-only (HOT), and a fill factor that
 * leaves room for them; and it runs on plain JDBC, without Spring's transaction machinery.
 * Not a product storage: no query timeout, no exception translation, no expiry removal.
 */
final class SelectForUpdateStorage implements AtomicStateStorage {

	/** The table of the sketch, beside the store's. */
	static final String TABLE = "proto_bucket";

	private static final String CLOCK = "(extract(epoch from clock_timestamp()) * 1000000)::bigint";

	private final DataSource dataSource;

	SelectForUpdateStorage(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	/** Creates the sketch's table unless it exists. */
	void createSchema() {
		try (Connection connection = this.dataSource.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute("CREATE TABLE IF NOT EXISTS " + TABLE
					+ " (id bytea PRIMARY KEY, state bytea, expires_at bigint NOT NULL) WITH (fillfactor = 90)");
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public <T> T update(List<BucketKey> keys, Function<Transaction, T> body) {
		byte[][] ids = new byte[keys.size()][];
		for (int i = 0; i < ids.length; i++) {
			ids[i] = id(keys.get(i));
		}
		try (Connection connection = this.dataSource.getConnection()) {
			connection.setAutoCommit(false);
			try {
				Step step = lock(connection, ids, false);
				if (step == null) {
					// a bucket is new: start again with the statement that creates rows, in id order
					connection.rollback();
					step = lock(connection, ids, true);
				}
				T answer = body.apply(step);
				step.writeBack(connection);
				connection.commit();
				return answer;
			}
			catch (SQLException | RuntimeException ex) {
				connection.rollback();
				throw ex;
			}
			finally {
				connection.setAutoCommit(true);
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException("The PostgreSQL sketch failed: " + ex, ex);
		}
	}

	/**
	 * Locks the rows in id order and reads them with the time after the locks; answers
	 * {@code null} when a row is missing and {@code create} is false.
	 */
	private Step lock(Connection connection, byte[][] ids, boolean create) throws SQLException {
		byte[][] ordered = ids.clone();
		Arrays.sort(ordered, Arrays::compareUnsigned);
		String sql = create
				? "INSERT INTO " + TABLE + " AS b (id, state, expires_at) VALUES " + repeat("(?, NULL, 0)", ids.length)
						+ " ON CONFLICT (id) DO UPDATE SET expires_at = b.expires_at RETURNING b.id, b.state, b.expires_at, "
						+ CLOCK
				// the outer query reads the time once the inner one holds the locks
				: "SELECT b.id, b.state, b.expires_at, " + CLOCK + " FROM (SELECT id, state, expires_at FROM " + TABLE
						+ " WHERE id IN (" + repeat("?", ids.length) + ") ORDER BY id FOR UPDATE) AS b";
		Step step = new Step(ids);
		int found = 0;
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			for (int i = 0; i < ordered.length; i++) {
				statement.setBytes(i + 1, ordered[i]);
			}
			try (ResultSet rows = statement.executeQuery()) {
				while (rows.next()) {
					step.readRow(rows);
					found++;
				}
			}
		}
		return (found == ids.length) ? step : null;
	}

	@Override
	public boolean delete(BucketKey key) {
		throw new UnsupportedOperationException("The benchmark sketch only decides");
	}

	@Override
	public void deleteAll() {
		throw new UnsupportedOperationException("The benchmark sketch only decides");
	}

	@Override
	public String name() {
		return "jdbc-sketch";
	}

	private static byte[] id(BucketKey key) {
		try {
			MessageDigest digest = MessageDigest.getInstance("SHA-256");
			digest.update(key.limitName().getBytes(StandardCharsets.UTF_8));
			digest.update((byte) 0);
			digest.update(key.identity().getBytes(StandardCharsets.UTF_8));
			return digest.digest();
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static String repeat(String values, int count) {
		StringBuilder sql = new StringBuilder();
		for (int i = 0; i < count; i++) {
			sql.append((i > 0) ? ", " : "").append(values);
		}
		return sql.toString();
	}

	/** The rows one call read, and what its body wrote. */
	private static final class Step implements Transaction {

		private final byte[][] ids;

		private final byte[][] states;

		private final long[] expiries;

		private final byte[][] written;

		private final long[] writtenExpiries;

		private long now = Long.MIN_VALUE;

		Step(byte[][] ids) {
			this.ids = ids;
			this.states = new byte[ids.length][];
			this.expiries = new long[ids.length];
			this.written = new byte[ids.length][];
			this.writtenExpiries = new long[ids.length];
		}

		void readRow(ResultSet row) throws SQLException {
			byte[] id = row.getBytes(1);
			int index = 0;
			while (!Arrays.equals(this.ids[index], id)) {
				index++;
			}
			this.states[index] = row.getBytes(2);
			this.expiries[index] = row.getLong(3);
			this.now = Math.max(this.now, row.getLong(4));
		}

		@Override
		public long nowMicros() {
			return this.now;
		}

		@Override
		public byte[] state(int index) {
			byte[] state = this.states[index];
			return (state != null && this.expiries[index] > this.now) ? state : null;
		}

		@Override
		public void write(int index, byte[] state, long expiresAtMicros) {
			this.written[index] = state;
			this.writtenExpiries[index] = expiresAtMicros;
		}

		void writeBack(Connection connection) throws SQLException {
			int count = 0;
			for (byte[] state : this.written) {
				count += (state != null) ? 1 : 0;
			}
			if (count == 0) {
				return;
			}
			String sql = (count == 1) ? "UPDATE " + TABLE + " SET state = ?, expires_at = ? WHERE id = ?"
					: "UPDATE " + TABLE + " AS b SET state = v.state, expires_at = v.expires_at FROM (VALUES "
							+ repeat("(?::bytea, ?::bigint, ?::bytea)", count)
							+ ") AS v(state, expires_at, id) WHERE b.id = v.id";
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				int parameter = 1;
				for (int i = 0; i < this.ids.length; i++) {
					if (this.written[i] != null) {
						statement.setBytes(parameter++, this.written[i]);
						statement.setLong(parameter++, this.writtenExpiries[i]);
						statement.setBytes(parameter++, this.ids[i]);
					}
				}
				statement.executeUpdate();
			}
		}

	}

}
