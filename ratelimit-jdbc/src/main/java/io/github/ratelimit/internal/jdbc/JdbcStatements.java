package io.github.ratelimit.internal.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntFunction;
import java.util.regex.Pattern;

/**
 * The SQL of one table, built once per number of keys: a request with three limits runs
 * the same three strings every time, which the driver then prepares on the server.
 */
final class JdbcStatements {

	/** The database's time in microseconds since 1970, read when it is evaluated. */
	static final String DATABASE_CLOCK = "(extract(epoch from clock_timestamp()) * 1000000)::bigint";

	static final String SCHEMA_RESOURCE = "schema-postgresql.sql";

	private static final Pattern IDENTIFIER = Pattern
		.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?");

	private final String table;

	private final Map<Integer, String> lock = new ConcurrentHashMap<>();

	private final Map<Integer, String> create = new ConcurrentHashMap<>();

	private final Map<Integer, String> write = new ConcurrentHashMap<>();

	private final Map<Integer, String> read = new ConcurrentHashMap<>();

	JdbcStatements(String table) {
		this.table = requireIdentifier(table);
	}

	/**
	 * Checks that a table name is a plain identifier, optionally schema-qualified: it is
	 * written into SQL, so nothing else may pass.
	 */
	static String requireIdentifier(String table) {
		if (table == null || !IDENTIFIER.matcher(table).matches()) {
			throw new IllegalArgumentException("table must be a plain SQL identifier (letters, digits and _, "
					+ "optionally schema-qualified as schema.table): " + table);
		}
		return table;
	}

	String table() {
		return this.table;
	}

	/**
	 * Locks the rows that exist, in the order of their ids, and answers each with the
	 * database's time, read by the outer query once the row is locked: a bucket's time then
	 * never goes backwards, whoever held the row before.
	 */
	String lock(int keys) {
		return cached(this.lock, keys, (count) -> "SELECT id, state, expires_at, " + DATABASE_CLOCK + " FROM (SELECT id, "
				+ "state, expires_at FROM " + this.table + " WHERE id IN (" + repeat("?", count)
				+ ") ORDER BY id FOR UPDATE) AS locked");
	}

	/**
	 * Creates the missing rows and locks every row, in the order the ids are bound (the
	 * caller sorts them as the database does); a row that exists, or that another
	 * transaction created meanwhile, is locked as it is and answered with its state.
	 */
	String create(int keys) {
		return cached(this.create, keys, (count) -> "INSERT INTO " + this.table + " AS b (id, state, expires_at) VALUES "
				+ repeat("(?, NULL, 0)", count) + " ON CONFLICT (id) DO UPDATE SET expires_at = b.expires_at"
				+ " RETURNING b.id, b.state, b.expires_at, " + DATABASE_CLOCK);
	}

	/** Writes the states of some locked rows: parameters id, state, expiry per row. */
	String write(int rows) {
		return cached(this.write, rows, (count) -> (count == 1)
				? "UPDATE " + this.table + " SET state = ?, expires_at = ? WHERE id = ?"
				: "UPDATE " + this.table + " AS b SET state = v.state, expires_at = v.expires_at FROM (VALUES "
						+ repeat("(?::bytea, ?::bytea, ?::bigint)", count)
						+ ") AS v(id, state, expires_at) WHERE b.id = v.id");
	}

	/** Reads some rows without locking or creating them: one answer per key, with the time. */
	String read(int keys) {
		return cached(this.read, keys, (count) -> "SELECT k.id, b.state, b.expires_at, " + DATABASE_CLOCK + " FROM (VALUES "
				+ repeat("(?::bytea)", count) + ") AS k(id) LEFT JOIN " + this.table + " AS b ON b.id = k.id");
	}

	String delete() {
		return "DELETE FROM " + this.table + " WHERE id = ? RETURNING expires_at, " + DATABASE_CLOCK;
	}

	String deleteAll() {
		// not TRUNCATE: it takes an exclusive lock that would stall every decision
		return "DELETE FROM " + this.table;
	}

	String removeExpired() {
		// SKIP LOCKED: the rows a decision holds now are not expired for long, and
		// cleaning up never waits for them. No index on expires_at: every decision changes
		// it, and an index on it would keep every write from being a heap-only update; the
		// scan stops at the batch's last row
		return "DELETE FROM " + this.table + " WHERE ctid = ANY(ARRAY(SELECT ctid FROM " + this.table
				+ " WHERE expires_at < " + DATABASE_CLOCK + " LIMIT ? FOR UPDATE SKIP LOCKED))";
	}

	String size() {
		return "SELECT count(*) FROM " + this.table;
	}

	/**
	 * The statements of the packaged schema script for this table, in order.
	 */
	List<String> schema() {
		String script = schemaScript().replace("${table}", this.table);
		StringBuilder withoutComments = new StringBuilder();
		for (String line : script.split("\n")) {
			if (!line.strip().startsWith("--")) {
				withoutComments.append(line).append('\n');
			}
		}
		List<String> statements = new ArrayList<>();
		for (String statement : withoutComments.toString().split(";")) {
			if (!statement.isBlank()) {
				statements.add(statement.strip());
			}
		}
		return statements;
	}

	/**
	 * The packaged script, with the placeholder {@code ${table}}.
	 */
	static String schemaScript() {
		try (InputStream in = JdbcStatements.class.getResourceAsStream(SCHEMA_RESOURCE)) {
			if (in == null) {
				throw new IllegalStateException(SCHEMA_RESOURCE + " is missing beside " + JdbcStatements.class);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not read " + SCHEMA_RESOURCE, ex);
		}
	}

	private static String cached(Map<Integer, String> cache, int count, IntFunction<String> build) {
		return cache.computeIfAbsent(count, build::apply);
	}

	private static String repeat(String values, int count) {
		StringBuilder sql = new StringBuilder(values.length() * count + count * 2);
		for (int i = 0; i < count; i++) {
			if (i > 0) {
				sql.append(", ");
			}
			sql.append(values);
		}
		return sql.toString();
	}

}
