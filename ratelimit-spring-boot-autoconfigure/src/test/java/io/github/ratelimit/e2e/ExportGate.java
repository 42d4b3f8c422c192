package io.github.ratelimit.e2e;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Holds the export handlers of the front-end test applications until a test opens the
 * gate, so that a test knows an export is in flight while it sends the next one.
 */
final class ExportGate {

	private static volatile CountDownLatch entered = new CountDownLatch(1);

	private static volatile CountDownLatch open = new CountDownLatch(1);

	private ExportGate() {
	}

	/** Closes the gate for the next export. */
	static void close() {
		entered = new CountDownLatch(1);
		open = new CountDownLatch(1);
	}

	/** Called by an export handler as it starts. */
	static void entered() {
		entered.countDown();
	}

	/** Waits until an export has started. */
	static boolean awaitEntered() throws InterruptedException {
		return entered.await(10, TimeUnit.SECONDS);
	}

	/** Lets every export held at the gate finish. */
	static void open() {
		open.countDown();
	}

	/** Holds an export handler until the gate opens (at most 10 seconds). */
	static void await() throws InterruptedException {
		open.await(10, TimeUnit.SECONDS);
	}

	/** Whether the gate is open. */
	static boolean isOpen() {
		return open.getCount() == 0;
	}

}
