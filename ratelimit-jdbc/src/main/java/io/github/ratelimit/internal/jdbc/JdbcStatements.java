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
	 * Creates the missing rows and locks every row, in the keys' order, answering each
	 * row with the database's time read after its lock was taken.
	 */
	String lock(int keys) {
		return cached(this.lock, keys, (count) -> "INSERT INTO " + this.table + " AS b (id, state, expires_at) VALUES "
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
		// cleaning up never waits for them
		return "DELETE FROM " + this.table + " WHERE id IN (SELECT id FROM " + this.table + " WHERE expires_at < "
				+ DATABASE_CLOCK + " ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)";
	}

	String size() {
		return "SELECT count(*) FROM " + this.table;
	}

	/**
	 * The statements of the packaged schema script for this table, in order.
	 */
	List<String> schema() {
		String unqualified = this.table.substring(this.table.indexOf('.') + 1);
		String script = schemaScript().replace("${table}", this.table).replace("${index}", unqualified + "_expires_at");
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
	 * The packaged script, with the placeholders {@code ${table}} and {@code ${index}}.
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
