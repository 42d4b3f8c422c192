package io.github.ratelimit.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Runs work on a connection in a transaction of its own, on plain JDBC: committed when the
 * work returns, rolled back when it throws, and the connection's auto-commit put back, so
 * that a pool gets it back as it lent it.
 */
final class JdbcTransactions {

	private JdbcTransactions() {
	}

	/**
	 * Runs work in a transaction, or as it is when none is asked and the connection commits
	 * each statement.
	 * @param connection the connection
	 * @param transaction whether the work needs a transaction
	 * @param work the work
	 * @return what the work answered
	 * @throws SQLException when the work or the connection fails
	 */
	static <T> T run(Connection connection, boolean transaction, SqlWork<T> work) throws SQLException {
		boolean autoCommit = connection.getAutoCommit();
		if (!transaction && autoCommit) {
			return work.run(connection);
		}
		if (autoCommit) {
			connection.setAutoCommit(false);
		}
		Throwable failure = null;
		try {
			T result = work.run(connection);
			connection.commit();
			return result;
		}
		catch (SQLException | RuntimeException | Error ex) {
			failure = ex;
			rollback(connection, ex);
			throw ex;
		}
		finally {
			if (autoCommit) {
				try {
					connection.setAutoCommit(true);
				}
				catch (SQLException ex) {
					// a broken connection: report why the work failed, if it did
					if (failure == null) {
						throw ex;
					}
					failure.addSuppressed(ex);
				}
			}
		}
	}

	private static void rollback(Connection connection, Throwable failure) {
		try {
			connection.rollback();
		}
		catch (SQLException ex) {
			failure.addSuppressed(ex);
		}
	}

	/** Work on a connection. */
	@FunctionalInterface
	interface SqlWork<T> {

		T run(Connection connection) throws SQLException;

	}

}
