package io.github.ratelimit.internal.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A one-thread scheduler whose thread is held until the test releases it, so a test
 * knows that nothing scheduled has run before it says so; records every delay asked for.
 */
public final class ManualScheduler extends ScheduledThreadPoolExecutor {

	/** Name of the scheduler's thread. */
	public static final String THREAD_NAME = "manual-scheduler";

	private final CountDownLatch released = new CountDownLatch(1);

	private final List<Long> delaysMicros = Collections.synchronizedList(new ArrayList<>());

	/** Whether the hold itself is scheduled (not recorded). */
	private volatile boolean holding = true;

	/**
	 * Creates a held scheduler.
	 */
	public ManualScheduler() {
		super(1, (task) -> {
			Thread thread = new Thread(task, THREAD_NAME);
			thread.setDaemon(true);
			return thread;
		});
		execute(() -> {
			try {
				this.released.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		this.holding = false;
	}

	@Override
	public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
		if (!this.holding) {
			this.delaysMicros.add(unit.toMicros(delay));
		}
		return super.schedule(command, delay, unit);
	}

	/**
	 * Lets the scheduler's thread run what was scheduled, each task when its delay is over.
	 */
	public void release() {
		this.released.countDown();
	}

	/**
	 * The delays asked for so far, in order.
	 * @return microseconds
	 */
	public List<Long> delaysMicros() {
		synchronized (this.delaysMicros) {
			return List.copyOf(this.delaysMicros);
		}
	}

}
