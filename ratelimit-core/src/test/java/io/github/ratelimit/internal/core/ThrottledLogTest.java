package io.github.ratelimit.internal.core;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ThrottledLogTest {

	private static final long INTERVAL = 1_000_000_000L;

	private final AtomicLong ticker = new AtomicLong(-7);

	private final ThrottledLog log = new ThrottledLog(INTERVAL, this.ticker::get);

	private final List<String> lines = new CopyOnWriteArrayList<>();

	@Test
	void passesTheFirstMessageAtOnce() {
		assertThat(this.log.log("store down", this.lines::add)).isTrue();
		assertThat(this.lines).containsExactly("store down");
	}

	@Test
	void passesAtMostOneMessagePerInterval() {
		for (int i = 0; i < 100; i++) {
			this.log.log("store down " + i, this.lines::add);
			this.ticker.addAndGet(INTERVAL / 40);
		}
		// 100 messages over two and a half intervals
		assertThat(this.lines).hasSize(3);
	}

	@Test
	void holdsBackMessagesUntilTheIntervalHasPassed() {
		this.log.log("first", this.lines::add);
		this.ticker.addAndGet(INTERVAL - 1);
		assertThat(this.log.log("too soon", this.lines::add)).isFalse();
		this.ticker.addAndGet(1);
		assertThat(this.log.log("next", this.lines::add)).isTrue();
		assertThat(this.lines).hasSize(2);
	}

	@Test
	void countsTheMessagesItHeldBack() {
		this.log.log("first", this.lines::add);
		for (int i = 0; i < 5; i++) {
			this.log.log("held", this.lines::add);
		}
		this.ticker.addAndGet(INTERVAL);
		this.log.log("next", this.lines::add);
		this.ticker.addAndGet(INTERVAL);
		this.log.log("quiet", this.lines::add);
		assertThat(this.lines).containsExactly("first", "next (5 similar messages suppressed)", "quiet");
	}

	@Test
	void passesOneMessageWhenManyThreadsFailAtOnce() throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			CountDownLatch start = new CountDownLatch(1);
			for (int t = 0; t < 8; t++) {
				threads.submit(() -> {
					start.await();
					for (int i = 0; i < 500; i++) {
						this.log.log("store down", this.lines::add);
					}
					return null;
				});
			}
			start.countDown();
			threads.shutdown();
			assertThat(threads.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(this.lines).containsExactly("store down");
		this.ticker.addAndGet(INTERVAL);
		this.log.log("store down", this.lines::add);
		assertThat(this.lines).last().isEqualTo("store down (3999 similar messages suppressed)");
	}

}
