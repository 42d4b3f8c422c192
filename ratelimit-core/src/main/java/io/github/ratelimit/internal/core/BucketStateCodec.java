package io.github.ratelimit.internal.core;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Objects;

import io.github.ratelimit.Algorithm;

/**
 * A compact, versioned binary form of every algorithm's {@link BucketState}, so that a
 * store which reads and writes a bucket as bytes (atomically, elsewhere) decides it with
 * the same Java code as the in-memory store.
 * <p>
 * Big-endian throughout ({@link ByteBuffer}'s default). Every form begins with the
 * format {@link #VERSION} (one byte) and the algorithm's code (one byte), then:
 * <ul>
 * <li>token and leaky bucket (codes 1, 2): the time the bucket is full again and the
 * emission interval it was computed with (two longs), 18 bytes in all;</li>
 * <li>fixed window (3): the window's start and end and its count (three longs), 26
 * bytes;</li>
 * <li>sliding window log (4): the number of entries (an int), then each entry's timestamp
 * and cost (two longs), oldest first: 6 bytes plus 16 per entry;</li>
 * <li>sliding window counter (5): the current window's start, its count and the previous
 * window's count (three longs), 26 bytes;</li>
 * <li>concurrency (6): the number of leases held (an int), then each lease's expiry time
 * (a long): 6 bytes plus 8 per lease.</li>
 * </ul>
 * Bytes of another version, of another algorithm than the one asked for, cut short or
 * followed by anything are rejected with an {@link IllegalArgumentException}.
 */
public final class BucketStateCodec {

	/** The format version written as the first byte. */
	public static final byte VERSION = 1;

	private static final int HEADER = 2;

	private static final int ENTRY_BYTES = 2 * Long.BYTES;

	private BucketStateCodec() {
	}

	/**
	 * The binary form of a state.
	 * @param state a state of one of this package's algorithms
	 * @return a new array, beginning with the version and the algorithm's code
	 */
	public static byte[] encode(BucketState state) {
		Objects.requireNonNull(state, "state must not be null");
		Algorithm algorithm = state.algorithm();
		ByteBuffer out;
		switch (algorithm) {
			case TOKEN_BUCKET, LEAKY_BUCKET -> {
				TokenBucket bucket = (TokenBucket) state;
				out = header(algorithm, 2 * Long.BYTES).putLong(bucket.tat).putLong(bucket.interval);
			}
			case FIXED_WINDOW -> {
				FixedWindow window = (FixedWindow) state;
				out = header(algorithm, 3 * Long.BYTES).putLong(window.windowStart())
					.putLong(window.windowEnd())
					.putLong(window.count());
			}
			case SLIDING_WINDOW_LOG -> {
				SlidingWindowLog log = (SlidingWindowLog) state;
				out = header(algorithm, Integer.BYTES + log.size() * ENTRY_BYTES).putInt(log.size());
				for (long[] entry : log.entries()) {
					out.putLong(entry[0]).putLong(entry[1]);
				}
			}
			case SLIDING_WINDOW_COUNTER -> {
				SlidingWindowCounter counter = (SlidingWindowCounter) state;
				out = header(algorithm, 3 * Long.BYTES).putLong(counter.windowStart())
					.putLong(counter.current())
					.putLong(counter.previous());
			}
			case CONCURRENCY -> {
				long[] expiries = ((ConcurrencyLeases) state).expiries();
				out = header(algorithm, Integer.BYTES + expiries.length * Long.BYTES).putInt(expiries.length);
				for (long expiry : expiries) {
					out.putLong(expiry);
				}
			}
			default -> throw new IllegalArgumentException("No binary form for " + algorithm);
		}
		return out.array();
	}

	/**
	 * Reads the state a former {@link #encode(BucketState)} wrote.
	 * @param algorithm the algorithm the bucket belongs to
	 * @param bytes its binary form
	 * @return a new state of that algorithm
	 * @throws IllegalArgumentException when the bytes are of another version or
	 * algorithm, cut short, too long, or hold a negative count
	 */
	public static BucketState decode(Algorithm algorithm, byte[] bytes) {
		Objects.requireNonNull(algorithm, "algorithm must not be null");
		Objects.requireNonNull(bytes, "bytes must not be null");
		if (bytes.length < HEADER) {
			throw invalid(algorithm, bytes, "shorter than its " + HEADER + "-byte header");
		}
		if (bytes[0] != VERSION) {
			throw invalid(algorithm, bytes, "of unknown format version " + bytes[0] + " (expected " + VERSION + ")");
		}
		if (bytes[1] != code(algorithm)) {
			throw invalid(algorithm, bytes, "of algorithm code " + bytes[1] + " (expected " + code(algorithm) + ")");
		}
		ByteBuffer in = ByteBuffer.wrap(bytes, HEADER, bytes.length - HEADER);
		BucketState state;
		try {
			state = read(algorithm, in);
		}
		catch (BufferUnderflowException ex) {
			throw invalid(algorithm, bytes, "cut short");
		}
		if (in.hasRemaining()) {
			throw invalid(algorithm, bytes, "followed by " + in.remaining() + " unread bytes");
		}
		return state;
	}

	private static BucketState read(Algorithm algorithm, ByteBuffer in) {
		switch (algorithm) {
			case TOKEN_BUCKET, LEAKY_BUCKET -> {
				TokenBucket bucket = (algorithm == Algorithm.TOKEN_BUCKET) ? new TokenBucket() : new LeakyBucket();
				bucket.tat = in.getLong();
				bucket.interval = in.getLong();
				return bucket;
			}
			case FIXED_WINDOW -> {
				return new FixedWindow(in.getLong(), in.getLong(), in.getLong());
			}
			case SLIDING_WINDOW_LOG -> {
				int size = count(in, ENTRY_BYTES);
				SlidingWindowLog log = new SlidingWindowLog();
				for (int i = 0; i < size; i++) {
					log.restore(in.getLong(), in.getLong());
				}
				return log;
			}
			case SLIDING_WINDOW_COUNTER -> {
				return new SlidingWindowCounter(in.getLong(), in.getLong(), in.getLong());
			}
			case CONCURRENCY -> {
				long[] expiries = new long[count(in, Long.BYTES)];
				for (int i = 0; i < expiries.length; i++) {
					expiries[i] = in.getLong();
				}
				return new ConcurrencyLeases(expiries);
			}
			default -> throw new IllegalArgumentException("No binary form for " + algorithm);
		}
	}

	/**
	 * Reads a list's count, refusing one the remaining bytes cannot hold, so that hostile
	 * input never allocates more than its own size.
	 */
	private static int count(ByteBuffer in, int bytesPerElement) {
		int count = in.getInt();
		if (count < 0) {
			throw new IllegalArgumentException("Bucket state holds a negative count " + count);
		}
		if ((long) count * bytesPerElement > in.remaining()) {
			throw new BufferUnderflowException();
		}
		return count;
	}

	/**
	 * Whether bytes begin as this version's form of an algorithm's state does: what a store
	 * checks before it decodes, reading anything else as a fresh bucket.
	 * @param algorithm the algorithm the bucket belongs to
	 * @param bytes the stored bytes
	 * @return whether the version and the algorithm's code match
	 */
	public static boolean holds(Algorithm algorithm, byte[] bytes) {
		return bytes.length >= HEADER && bytes[0] == VERSION && bytes[1] == code(algorithm);
	}

	/**
	 * The code an algorithm's binary form is tagged with; fixed here rather than taken from
	 * the enum's order, so that adding an algorithm never changes a stored form.
	 * @param algorithm an algorithm
	 * @return its code, from 1
	 */
	static byte code(Algorithm algorithm) {
		return switch (algorithm) {
			case TOKEN_BUCKET -> 1;
			case LEAKY_BUCKET -> 2;
			case FIXED_WINDOW -> 3;
			case SLIDING_WINDOW_LOG -> 4;
			case SLIDING_WINDOW_COUNTER -> 5;
			case CONCURRENCY -> 6;
		};
	}

	private static ByteBuffer header(Algorithm algorithm, int bodyBytes) {
		return ByteBuffer.allocate(HEADER + bodyBytes).put(VERSION).put(code(algorithm));
	}

	private static IllegalArgumentException invalid(Algorithm algorithm, byte[] bytes, String problem) {
		return new IllegalArgumentException(
				"Bucket state of " + algorithm + " (" + bytes.length + " bytes) is " + problem);
	}

}
