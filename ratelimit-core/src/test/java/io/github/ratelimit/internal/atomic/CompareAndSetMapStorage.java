package io.github.ratelimit.internal.atomic;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.BucketKey;

/**
 * A storage without locks, as an engine with compare-and-set works: a step reads versioned
 * values, runs its body, and writes only if no value changed meanwhile, else runs the body
 * again. Several keys commit by replacing each value only if it is still the one read, in
 * key order, undoing the replaced ones when a later one changed; a step that finds a value
 * of another step's commit in progress waits for it and runs again.
 */
class CompareAndSetMapStorage implements AtomicStateStorage {

	private final ConcurrentHashMap<BucketKey, Versioned> states = new ConcurrentHashMap<>();

	private final AtomicInteger retries = new AtomicInteger();

	private final Object commitLock = new Object();

	@Override
	public <T> T update(List<BucketKey> keys, Function<Transaction, T> body) {
		for (;;) {
			Versioned[] read = new Versioned[keys.size()];
			for (int i = 0; i < read.length; i++) {
				read[i] = this.states.get(keys.get(i));
			}
			long now = System.currentTimeMillis() * 1_000;
			Versioned[] written = new Versioned[keys.size()];
			T answer = body.apply(new Transaction() {

				@Override
				public long nowMicros() {
					return now;
				}

				@Override
				public byte @Nullable [] state(int index) {
					Versioned value = read[index];
					return (value != null) ? value.state().clone() : null;
				}

				@Override
				public void write(int index, byte[] state, long expiresAtMicros) {
					written[index] = new Versioned(state.clone(), (read[index] != null) ? read[index].version() + 1 : 1);
				}

			});
			if (commit(keys, read, written)) {
				return answer;
			}
			this.retries.incrementAndGet();
		}
	}

	/**
	 * Writes every written value if every key still holds what was read. One commit at a
	 * time keeps several keys all-or-nothing; each write is still a compare-and-set, so a
	 * single-key engine's conditional put is all this needs per key.
	 */
	private boolean commit(List<BucketKey> keys, Versioned[] read, Versioned[] written) {
		synchronized (this.commitLock) {
			for (int i = 0; i < read.length; i++) {
				if (this.states.get(keys.get(i)) != read[i]) {
					return false;
				}
			}
			for (int i = 0; i < written.length; i++) {
				if (written[i] == null) {
					continue;
				}
				boolean replaced = (read[i] != null) ? this.states.replace(keys.get(i), read[i], written[i])
						: this.states.putIfAbsent(keys.get(i), written[i]) == null;
				if (!replaced) {
					throw new IllegalStateException("A value changed outside a commit");
				}
			}
			return true;
		}
	}

	@Override
	public boolean delete(BucketKey key) {
		synchronized (this.commitLock) {
			return this.states.remove(key) != null;
		}
	}

	@Override
	public void deleteAll() {
		synchronized (this.commitLock) {
			this.states.clear();
		}
	}

	@Override
	public String name() {
		return "cas-map";
	}

	/** Steps that ran their body again because a value changed after they read it. */
	int retries() {
		return this.retries.get();
	}

	record Versioned(byte[] state, long version) {
	}

}
