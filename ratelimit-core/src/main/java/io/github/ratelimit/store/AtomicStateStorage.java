package io.github.ratelimit.store;

import java.util.List;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * Storage that keeps each bucket's state as bytes and changes the states of several
 * buckets in one atomic step: what a new engine implements to become a complete
 * {@link RateLimitStore}. {@link RateLimitStores#atomic(AtomicStateStorage)} builds the
 * store, which decides every algorithm, weighted cost, several limits all-or-nothing,
 * refund, concurrency permit, calendar quota, inspect and reset with the same Java code as
 * the in-memory store; the storage only reads, locks and writes bytes.
 * <p>
 * An engine with row locks (a SQL database) locks the rows in {@link #update}, lets the
 * body decide and writes in the same transaction. An engine with compare-and-set reads,
 * runs the body, and writes only if nothing changed meanwhile, running the body again
 * otherwise: the body has no effect but on the {@link Transaction} it is given.
 * <p>
 * The store contract suite of ratelimit-core's test-jar proves a storage:
 * {@code io.github.ratelimit.store.contract.AtomicStateStorageContractTests} needs one
 * method that creates it.
 */
public interface AtomicStateStorage {

	/**
	 * Reads the states of {@code keys} and the storage's time, runs {@code body}, and
	 * writes the states the body wrote, as one atomic step: no other update of these keys
	 * happens in between, and either every write is kept or none.
	 * @param <T> what the body answers
	 * @param keys distinct bucket keys, sorted (so that engines locking in this order never
	 * deadlock)
	 * @param body reads and writes the states; it may run more than once, so it changes
	 * nothing but the transaction
	 * @return what the body answered
	 * @throws RuntimeException when the storage fails; nothing is written then
	 */
	<T> T update(List<BucketKey> keys, Function<Transaction, T> body);

	/**
	 * Reads the states of {@code keys} and the storage's time for a body that writes
	 * nothing: what inspecting a bucket does. Storages that can read without locking
	 * override it; by default it is an {@link #update}.
	 * @param <T> what the body answers
	 * @param keys distinct bucket keys, sorted
	 * @param body reads the states; any write it makes is discarded or kept, as the
	 * storage finds simpler
	 * @return what the body answered
	 */
	default <T> T read(List<BucketKey> keys, Function<Transaction, T> body) {
		return update(keys, body);
	}

	/**
	 * Forgets one bucket's state.
	 * @param key the bucket
	 * @return whether the storage held a state for it that had not expired
	 */
	boolean delete(BucketKey key);

	/**
	 * Forgets every bucket's state: what a test does between two tests.
	 */
	void deleteAll();

	/**
	 * The storage's name, which the store built on it reports to metrics, health and the
	 * actuator endpoint.
	 * @return a short lower-case name such as {@code jdbc}; by default the class name
	 */
	default String name() {
		return getClass().getName();
	}

	/**
	 * One atomic step over the states of some buckets, as {@link #update} gives it to its
	 * body.
	 */
	interface Transaction {

		/**
		 * The storage's time, read while the keys were held, so that every instance
		 * sharing the storage decides on one clock.
		 * @return microseconds since 1970-01-01T00:00:00Z
		 */
		long nowMicros();

		/**
		 * The state of one key as last written.
		 * @param index the key's position in the list given to {@link #update}
		 * @return the bytes, or {@code null} when the storage holds none or they expired
		 */
		byte @Nullable [] state(int index);

		/**
		 * Writes the state of one key, kept when the step completes.
		 * @param index the key's position in the list given to {@link #update}
		 * @param state the new bytes
		 * @param expiresAtMicros storage time after which the state no longer matters: the
		 * storage may then forget it, and must read it as {@code null}
		 */
		void write(int index, byte[] state, long expiresAtMicros);

	}

}
