package io.github.ratelimit.internal.overload;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link WaitTimer} whose tasks run when a test says so: waits end deterministically,
 * without a clock.
 */
final class ManualTimer implements WaitTimer {

	private final List<Task> tasks = new ArrayList<>();

	@Override
	public synchronized Runnable schedule(Runnable task, long delayNanos) {
		Task scheduled = new Task(task, delayNanos);
		this.tasks.add(scheduled);
		return () -> scheduled.cancelled = true;
	}

	/** Runs every task scheduled so far that was not cancelled. */
	void fireAll() {
		List<Task> due;
		synchronized (this) {
			due = new ArrayList<>(this.tasks);
			this.tasks.clear();
		}
		for (Task task : due) {
			if (!task.cancelled) {
				task.action.run();
			}
		}
	}

	/** The tasks scheduled and neither run nor cancelled. */
	synchronized long pending() {
		return this.tasks.stream().filter((task) -> !task.cancelled).count();
	}

	private static final class Task {

		final Runnable action;

		final long delayNanos;

		volatile boolean cancelled;

		Task(Runnable action, long delayNanos) {
			this.action = action;
			this.delayNanos = delayNanos;
		}

	}

}
