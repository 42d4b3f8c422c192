package io.github.ratelimit.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.store.RateLimitObserver;
import io.github.ratelimit.store.Acquisition;
import io.github.ratelimit.store.MutableDecision;
import io.github.ratelimit.store.RateLimit;
import io.github.ratelimit.store.RateLimitDecision;
import io.github.ratelimit.store.RateLimitResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How several {@link RateLimitObserver} beans are told as one.
 */
class RateLimitObserversTests {

	private final RateLimit limit = RateLimit.of("orders", Algorithm.FIXED_WINDOW, 2, Duration.ofMinutes(1));

	@Test
	void everyObserverIsToldWhichAcquisitionsWereDecided() {
		List<String> told = new ArrayList<>();
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerSingleton("first", recorder("first", told));
		beanFactory.registerSingleton("second", recorder("second", told));
		RateLimitObserver observer = RateLimitObservers.of(beanFactory.getBeanProvider(RateLimitObserver.class));
		RateLimitDecision decision = new RateLimitDecision(this.limit, true, 1, 60_000_000, 0, 0);
		observer.decided(List.of(new Acquisition(this.limit, "user:alice", 1)),
				new RateLimitResult(List.of(decision), 0), 10);
		assertThat(told).containsExactly("first user:alice", "second user:alice");
	}

	@Test
	void everyObserverIsToldOfADecisionMadeInPlaceAsOfItsAcquisition() {
		List<String> told = new ArrayList<>();
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerSingleton("first", recorder("first", told));
		beanFactory.registerSingleton("second", recorder("second", told));
		RateLimitObserver observer = RateLimitObservers.of(beanFactory.getBeanProvider(RateLimitObserver.class));
		MutableDecision decision = new MutableDecision().set(this.limit, true, 1, 60_000_000, 0, 0)
			.decidedAt(0, RateLimitResult.MEMORY);
		observer.decided(this.limit, "user:bob", 1, decision, RateLimitObserver.UNTIMED);
		assertThat(told).containsExactly("first user:bob", "second user:bob");
	}

	@Test
	void everyObserverIsToldOfASettlementWithItsOwnCopyOfTheActualCosts() {
		List<String> told = new ArrayList<>();
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerSingleton("first", recorder("first", told));
		beanFactory.registerSingleton("second", recorder("second", told));
		RateLimitObserver observer = RateLimitObservers.of(beanFactory.getBeanProvider(RateLimitObserver.class));
		RateLimitDecision decision = new RateLimitDecision(this.limit, true, 1, 60_000_000, 0, 0);
		observer.settled(List.of(new Acquisition(this.limit, "user:carol", 2)),
				new RateLimitResult(List.of(decision), 0), new long[] { 1 });
		assertThat(told).containsExactly("first user:carol 2 -> 1", "second user:carol 2 -> 1");
	}

	@Test
	void noObserverBeanIsNone() {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		assertThat(RateLimitObservers.of(beanFactory.getBeanProvider(RateLimitObserver.class)))
			.isSameAs(RateLimitObserver.NONE);
	}

	private static RateLimitObserver recorder(String name, List<String> told) {
		return new RateLimitObserver() {

			@Override
			public void decided(List<Acquisition> acquisitions, RateLimitResult result, long nanos) {
				told.add(name + " " + acquisitions.get(0).identity());
			}

			@Override
			public void settled(List<Acquisition> reserved, RateLimitResult decided, long[] actualCosts) {
				told.add(name + " " + reserved.get(0).identity() + " " + reserved.get(0).cost() + " -> "
						+ actualCosts[0]);
				// an observer may keep or change its copy; the next one is not affected
				actualCosts[0] = -1;
			}

		};
	}

}
