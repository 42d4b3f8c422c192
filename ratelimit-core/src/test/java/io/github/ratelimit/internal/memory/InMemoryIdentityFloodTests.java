package io.github.ratelimit.internal.memory;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitResult;
import io.github.ratelimit.store.contract.MutableClock;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Floods of a million distinct identities against the in-memory store, as a client
 * rotating usernames and addresses sends them at a login endpoint limited per address and
 * per username: Erin's used-up username bucket, with most of its minute left, survives
 * them, and the store never holds more buckets than its bound.
 */
class InMemoryIdentityFloodTests {

	private static final int FLOOD = 1_000_000;

	/** How often the flood stops to count the buckets held (counting looks at every one). */
	private static final int COUNT_EVERY = 100_000;

	private static final RateLimit LOGIN_IP = RateLimit.of("login-ip", Algorithm.TOKEN_BUCKET, 10,
			Duration.ofMinutes(1));

	private static final RateLimit LOGIN_USERNAME = RateLimit.of("login-username", Algorithm.SLIDING_WINDOW_LOG, 5,
			Duration.ofMinutes(1));

	private static final String ERIN = "user:erin";

	private final MutableClock clock = new MutableClock();

	@ParameterizedTest
	@ValueSource(longs = { InMemoryRateLimitStore.DEFAULT_MAXIMUM_KEYS, 1_000 })
	void usedUpBucketSurvivesAFloodThatAnotherLimitRejects(long maximumKeys) {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, maximumKeys);
		useUpErinsBucket(store);
		String attacker = "ip:203.0.113.9";
		for (int i = 0; i < 10; i++) {
			assertThat(login(store, attacker, "user:guess-" + i).allowed()).isTrue();
		}
		long kept = store.size();
		int rejected = 0;
		for (int i = 0; i < FLOOD; i++) {
			this.clock.advanceMicros(1);
			RateLimitResult result = login(store, attacker, "user:flood-" + i);
			if (!result.allowed() && result.decisions().get(1).allowed()) {
				// rejected by the address limit alone, the username limit would have admitted
				rejected++;
			}
		}
		assertThat(rejected).isEqualTo(FLOOD);
		assertThat(store.size()).as("buckets kept").isEqualTo(kept).isLessThanOrEqualTo(maximumKeys);
		assertErinIsLockedOut(store);
	}

	@ParameterizedTest
	@ValueSource(longs = { InMemoryRateLimitStore.DEFAULT_MAXIMUM_KEYS, 1_000 })
	void usedUpBucketSurvivesAFloodThatEveryLimitAdmits(long maximumKeys) {
		InMemoryRateLimitStore store = new InMemoryRateLimitStore(this.clock, maximumKeys);
		useUpErinsBucket(store);
		int admitted = 0;
		long mostKept = 0;
		for (int i = 0; i < FLOOD; i++) {
			this.clock.advanceMicros(1);
			String address = "ip:10." + (i >> 16) + "." + ((i >> 8) & 0xff) + "." + (i & 0xff);
			if (login(store, address, "user:flood-" + i).allowed()) {
				admitted++;
			}
			if (i % COUNT_EVERY == COUNT_EVERY - 1) {
				mostKept = Math.max(mostKept, store.size());
				assertThat(store.size()).as("buckets kept after %,d requests", i + 1)
					.isLessThanOrEqualTo(maximumKeys);
			}
		}
		assertThat(admitted).isEqualTo(FLOOD);
		assertThat(mostKept).as("the flood filled the store").isGreaterThan(maximumKeys / 2);
		assertThat(store.size()).as("buckets kept").isLessThanOrEqualTo(maximumKeys);
		assertErinIsLockedOut(store);
	}

	/** Five failed logins for Erin, from one address: her username's minute is used up. */
	private void useUpErinsBucket(InMemoryRateLimitStore store) {
		for (int i = 0; i < 5; i++) {
			assertThat(login(store, "ip:198.51.100.7", ERIN).allowed()).isTrue();
		}
		assertThat(login(store, "ip:198.51.100.7", ERIN).allowed()).isFalse();
	}

	private void assertErinIsLockedOut(InMemoryRateLimitStore store) {
		assertThat(store.inspect(LOGIN_USERNAME, ERIN).remaining()).isZero();
		RateLimitResult fromElsewhere = login(store, "ip:192.0.2.1", ERIN);
		assertThat(fromElsewhere.allowed()).isFalse();
		assertThat(fromElsewhere.rejections()).singleElement()
			.satisfies((rejection) -> assertThat(rejection.limit()).isEqualTo(LOGIN_USERNAME))
			// still most of the minute to wait: a second or so of the flood has passed
			.satisfies((rejection) -> assertThat(rejection.retryAfterMicros()).isGreaterThan(55_000_000));
	}

	private static RateLimitResult login(InMemoryRateLimitStore store, String address, String username) {
		return store.tryAcquire(List.of(new Acquisition(LOGIN_IP, address, 1), new Acquisition(LOGIN_USERNAME,
				username, 1)));
	}

}
