package io.github.ratelimit.internal.atomic;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.BucketKey;

/**
 * A storage that holds one lock across each step, as an engine with row locks does: the
 * smallest complete {@link AtomicStateStorage}, and the model the contract runs on.
 */
class LockingMapStorage implements AtomicStateStorage {

	private final ReentrantLock lock = new ReentrantLock();

	private final Map<BucketKey, Stored> states = new HashMap<>();

	private final MapClock clock;

	private volatile boolean failing;

	LockingMapStorage(MapClock clock) {
		this.clock = clock;
	}

	/**
	 * Makes every later call throw, as a storage whose database went away does, or answer
	 * again.
	 * @param failing whether calls fail
	 */
	void failing(boolean failing) {
		this.failing = failing;
	}

	@Override
	public <T> T update(List<BucketKey> keys, Function<Transaction, T> body) {
		failIfFailing();
		this.lock.lock();
		try {
			long now = this.clock.nowMicros();
			Stored[] read = new Stored[keys.size()];
			for (int i = 0; i < read.length; i++) {
				Stored stored = this.states.get(keys.get(i));
				read[i] = (stored != null && stored.expiresAtMicros() > now) ? stored : null;
			}
			Stored[] written = new Stored[keys.size()];
			T answer = body.apply(new Transaction() {

				@Override
				public long nowMicros() {
					return now;
				}

				@Override
				public byte @Nullable [] state(int index) {
					return (read[index] != null) ? read[index].state().clone() : null;
				}

				@Override
				public void write(int index, byte[] state, long expiresAtMicros) {
					written[index] = new Stored(state.clone(), expiresAtMicros);
				}

			});
			for (int i = 0; i < written.length; i++) {
				if (written[i] != null) {
					this.states.put(keys.get(i), written[i]);
				}
			}
			return answer;
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public boolean delete(BucketKey key) {
		failIfFailing();
		this.lock.lock();
		try {
			Stored removed = this.states.remove(key);
			return removed != null && removed.expiresAtMicros() > this.clock.nowMicros();
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void deleteAll() {
		failIfFailing();
		this.lock.lock();
		try {
			this.states.clear();
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public String name() {
		return "locking-map";
	}

	private void failIfFailing() {
		if (this.failing) {
			throw new IllegalStateException("The locking map is failing");
		}
	}

	/** States held now, expired or not. */
	int size() {
		this.lock.lock();
		try {
			return this.states.size();
		}
		finally {
			this.lock.unlock();
		}
	}

	/** The storage's own time, which the store reads unless it is given a clock. */
	interface MapClock {

		long nowMicros();

	}

	record Stored(byte[] state, long expiresAtMicros) {
	}

}
