package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;

import io.lettuce.core.cluster.SlotHash;

/**
 * For every Redis Cluster slot, the first text of one to three letters or digits (in the
 * order of length, then of {@link #ALPHABET}) whose hash slot it is. A key whose hash tag
 * is the tag of an identity's slot lives where a key tagged with the identity would.
 * Computed once, the first time a store needs one.
 */
final class SlotTags {

	private static final byte[] ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		.getBytes(StandardCharsets.US_ASCII);

	private static final int LONGEST = 3;

	/** The tags, {@link #LONGEST} bytes a slot, a shorter tag padded with zero bytes. */
	private static final byte[] TAGS = tags();

	private SlotTags() {
	}

	/**
	 * The tag of a slot.
	 * @param slot a slot, 0 to 16383
	 * @return one to three ASCII letters or digits, a new array
	 */
	static byte[] of(int slot) {
		int start = slot * LONGEST;
		int length = 0;
		while (length < LONGEST && TAGS[start + length] != 0) {
			length++;
		}
		byte[] tag = new byte[length];
		System.arraycopy(TAGS, start, tag, 0, length);
		return tag;
	}

	private static byte[] tags() {
		byte[] tags = new byte[SlotHash.SLOT_COUNT * LONGEST];
		int found = 0;
		for (int length = 1; length <= LONGEST; length++) {
			int combinations = (int) Math.pow(ALPHABET.length, length);
			byte[] text = new byte[length];
			for (int n = 0; n < combinations && found < SlotHash.SLOT_COUNT; n++) {
				int rest = n;
				for (int i = length - 1; i >= 0; i--) {
					text[i] = ALPHABET[rest % ALPHABET.length];
					rest /= ALPHABET.length;
				}
				int slot = SlotHash.getSlot(text);
				if (tags[slot * LONGEST] == 0) {
					System.arraycopy(text, 0, tags, slot * LONGEST, length);
					found++;
				}
			}
			if (found == SlotHash.SLOT_COUNT) {
				return tags;
			}
		}
		throw new IllegalStateException("No tag of at most " + LONGEST + " characters for "
				+ (SlotHash.SLOT_COUNT - found) + " slots");
	}

}
