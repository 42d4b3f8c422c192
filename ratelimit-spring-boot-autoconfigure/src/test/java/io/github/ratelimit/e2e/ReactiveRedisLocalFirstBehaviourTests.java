package io.github.ratelimit.e2e;

import java.time.Duration;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.test.context.ActiveProfiles;

import io.github.ratelimit.store.RateLimitStore;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The behaviour suite on the reactive front end with Redis in local-first mode, with
 * BlockHound watching the event loops: a request whose share is empty asks Redis (or waits
 * for the sync refilling it) without blocking one.
 */
@SpringBootTest(classes = { ReactiveE2eApplication.class, RedisFrontEndBehaviourTests.RedisConnection.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "ratelimit.redis.timeout=5s",
				"ratelimit.redis.key-prefix=reactive-local-first-suite:", "ratelimit.redis.mode=local-first",
				"spring.main.allow-bean-definition-overriding=true" })
@ActiveProfiles("frontend")
class ReactiveRedisLocalFirstBehaviourTests extends FrontEndBehaviourTests {

	@Autowired
	RateLimitStore store;

	@BeforeAll
	static void detectBlockingCalls() {
		ReactiveFrontEndBehaviourTests.detectBlockingCalls();
	}

	@BeforeEach
	void decidedAgainstShares() {
		assertThat(this.store.status().buckets()).anyMatch((buckets) -> buckets.store().equals("local-first shares"));
	}

	@Override
	boolean advertisesExactQuota() {
		return false;
	}

	@Override
	boolean releasesBeforeTheClientSeesTheAnswer() {
		return true;
	}

	@Override
	void advance(Duration duration) {
		RedisFrontEndBehaviourTests.NOW.addAndGet(duration.toNanos() / 1_000);
	}

}
