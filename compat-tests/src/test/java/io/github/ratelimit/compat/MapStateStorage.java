package io.github.ratelimit.compat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.github.ratelimit.store.AtomicStateStorage;
import io.github.ratelimit.store.BucketKey;

/**
 * A storage as an application writes one for an engine of its own: each bucket's bytes in
 * a map, one lock across each step, and the storage's own clock for expiry.
 */
class MapStateStorage implements AtomicStateStorage {

	private final Map<BucketKey, Stored> states = new ConcurrentHashMap<>();

	@Override
	public synchronized <T> T update(List<BucketKey> keys, Function<Transaction, T> body) {
		long now = System.currentTimeMillis() * 1_000;
		Map<Integer, Stored> written = new HashMap<>();
		T answer = body.apply(new Transaction() {

			@Override
			public long nowMicros() {
				return now;
			}

			@Override
			public byte @Nullable [] state(int index) {
				Stored stored = MapStateStorage.this.states.get(keys.get(index));
				return (stored != null && stored.expiresAtMicros() > now) ? stored.state().clone() : null;
			}

			@Override
			public void write(int index, byte[] state, long expiresAtMicros) {
				written.put(index, new Stored(state.clone(), expiresAtMicros));
			}

		});
		// only a body that completed writes anything
		written.forEach((index, stored) -> this.states.put(keys.get(index), stored));
		return answer;
	}

	@Override
	public synchronized boolean delete(BucketKey key) {
		Stored removed = this.states.remove(key);
		return removed != null && removed.expiresAtMicros() > System.currentTimeMillis() * 1_000;
	}

	@Override
	public synchronized void deleteAll() {
		this.states.clear();
	}

	@Override
	public String name() {
		return "map";
	}

	private record Stored(byte[] state, long expiresAtMicros) {
	}

}
