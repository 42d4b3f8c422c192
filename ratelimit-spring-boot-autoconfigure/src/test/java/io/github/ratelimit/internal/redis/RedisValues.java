package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Reads the values the store writes, for assertions: a token or leaky bucket's binary value
 * (see {@code token_bucket.lua}) as {@code <tat>:<interval>}, text as it is.
 */
final class RedisValues {

	private RedisValues() {
	}

	/**
	 * A string key's value.
	 * @param redis the connection
	 * @param key the key
	 * @return text as it is, a bucket as {@code <tat>:<interval>}, other bytes in hex, or
	 * {@code null} when the key holds nothing
	 */
	static String value(StringRedisTemplate redis, String key) {
		byte[] raw = redis.execute((RedisCallback<byte[]>) (connection) -> connection.stringCommands()
			.get(key.getBytes(StandardCharsets.UTF_8)));
		return format(raw);
	}

	/**
	 * A hash field's value, read as {@link #value} reads a key's.
	 * @param redis the connection
	 * @param key the hash
	 * @param field the field
	 * @return the value, or {@code null} when the field holds nothing
	 */
	static String field(StringRedisTemplate redis, String key, String field) {
		return format(redis.execute((RedisCallback<byte[]>) (connection) -> connection.hashCommands()
			.hGet(key.getBytes(StandardCharsets.UTF_8), field.getBytes(StandardCharsets.UTF_8))));
	}

	private static String format(byte[] raw) {
		if (raw == null) {
			return null;
		}
		if (isText(raw)) {
			return new String(raw, StandardCharsets.US_ASCII);
		}
		if (raw.length == 12 || raw.length == 14) {
			return bucket(raw);
		}
		return HexFormat.of().formatHex(raw);
	}

	/**
	 * Writes raw bytes, as a copy of another key's value.
	 * @param redis the connection
	 * @param from the key to copy
	 * @param to the key to write
	 */
	static void copy(StringRedisTemplate redis, String from, String to) {
		redis.execute((RedisCallback<Object>) (connection) -> connection.stringCommands()
			.set(to.getBytes(StandardCharsets.UTF_8),
					connection.stringCommands().get(from.getBytes(StandardCharsets.UTF_8))));
	}

	/** The time the bucket is full again, a signed 7-byte integer, then the interval, unsigned. */
	private static String bucket(byte[] raw) {
		long tat = 0;
		for (int i = 0; i < 7; i++) {
			tat = (tat << 8) | (raw[i] & 0xff);
		}
		// sign-extend the 56-bit value
		tat = (tat << 8) >> 8;
		long interval = 0;
		for (int i = 7; i < raw.length; i++) {
			interval = (interval << 8) | (raw[i] & 0xff);
		}
		return tat + ":" + interval;
	}

	private static boolean isText(byte[] raw) {
		for (byte b : raw) {
			if (b < 0x20 || b > 0x7e) {
				return false;
			}
		}
		return true;
	}

}
