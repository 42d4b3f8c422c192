package io.github.ratelimit.internal.redis;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SlotTagsTests {

	@Test
	void everySlotHasAShortTagHashingToIt() {
		Set<String> tags = new HashSet<>();
		for (int slot = 0; slot < SlotHash.SLOT_COUNT; slot++) {
			String tag = new String(SlotTags.of(slot), StandardCharsets.US_ASCII);
			assertThat(tag).as("tag of slot %d", slot).matches("[0-9a-zA-Z]{1,3}");
			assertThat(SlotHash.getSlot("prefix:{" + tag + "}:limit")).as("slot of %s", tag).isEqualTo(slot);
			tags.add(tag);
		}
		assertThat(tags).hasSize(SlotHash.SLOT_COUNT);
	}

}
