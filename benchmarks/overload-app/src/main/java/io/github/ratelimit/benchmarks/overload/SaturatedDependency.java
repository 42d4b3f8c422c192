package io.github.ratelimit.benchmarks.overload;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

import reactor.core.publisher.Mono;

/**
 * A downstream dependency that saturates: up to {@code knee} calls in flight each take
 * {@code base}; past the knee the calls share its capacity equally (processor sharing), so
 * each progresses at {@code knee / inFlight} of full speed and the dependency completes at
 * most {@code knee / base} calls per second however many wait. A call's progress is kept
 * on a virtual clock that advances at that rate, so a call that arrived in a crowd speeds
 * up as the crowd leaves. Calls wait by sleeping (or with {@link Mono#delay}), so a crowd
 * costs no CPU beyond a wake-up per {@code base} at most.
 */
final class SaturatedDependency {

	private final long baseNanos;

	private final int knee;

	private final LongSupplier nanoClock;

	private int inFlight;

	private long lastNanos;

	// the work every call in flight has received since the start, in nanoseconds of full speed
	private double virtualNanos;

	/**
	 * Creates a dependency.
	 * @param base how long a call takes at or below the knee
	 * @param knee how many calls in flight the dependency serves at full speed
	 * @param nanoClock the time, in nanoseconds
	 */
	SaturatedDependency(Duration base, int knee, LongSupplier nanoClock) {
		if (base.isNegative() || base.isZero()) {
			throw new IllegalArgumentException("bench.base must be positive: " + base);
		}
		if (knee < 1) {
			throw new IllegalArgumentException("bench.knee must be positive: " + knee);
		}
		this.baseNanos = base.toNanos();
		this.knee = knee;
		this.nanoClock = nanoClock;
		this.lastNanos = nanoClock.getAsLong();
	}

	/**
	 * Serves one call on the calling thread.
	 * @throws InterruptedException when interrupted while waiting
	 */
	void serve() throws InterruptedException {
		Call call = enter();
		try {
			long remaining;
			while ((remaining = remainingNanos(call)) > 0) {
				TimeUnit.NANOSECONDS.sleep(Math.min(remaining, this.baseNanos));
			}
		}
		finally {
			leave();
		}
	}

	/**
	 * Serves one call without blocking: completes when the call is done; cancelling it
	 * leaves the dependency as a finished call does.
	 * @return the call
	 */
	Mono<Void> serveReactive() {
		return Mono.defer(() -> {
			Call call = enter();
			// before the answer goes downstream, as the blocking call leaves before it returns
			AtomicBoolean done = new AtomicBoolean();
			Runnable leaveOnce = () -> {
				if (done.compareAndSet(false, true)) {
					leave();
				}
			};
			return waitFor(call).doOnTerminate(leaveOnce).doOnCancel(leaveOnce);
		});
	}

	private Mono<Void> waitFor(Call call) {
		return Mono.defer(() -> {
			long remaining = remainingNanos(call);
			if (remaining <= 0) {
				return Mono.empty();
			}
			return Mono.delay(Duration.ofNanos(Math.min(remaining, this.baseNanos))).then(waitFor(call));
		});
	}

	/**
	 * How many calls are in flight.
	 * @return the calls in flight
	 */
	synchronized int inFlight() {
		return this.inFlight;
	}

	synchronized Call enter() {
		advance();
		this.inFlight++;
		return new Call(this.virtualNanos + this.baseNanos);
	}

	/**
	 * How long the call still takes if the crowd stays as it is now.
	 * @param call a call in flight
	 * @return nanoseconds, 0 when the call is done
	 */
	synchronized long remainingNanos(Call call) {
		advance();
		double left = call.doneAt - this.virtualNanos;
		if (left <= 0) {
			return 0;
		}
		return (long) Math.ceil(left * Math.max(1.0, (double) this.inFlight / this.knee));
	}

	synchronized void leave() {
		advance();
		this.inFlight--;
	}

	private void advance() {
		long now = this.nanoClock.getAsLong();
		if (this.inFlight > 0) {
			this.virtualNanos += (now - this.lastNanos) * Math.min(1.0, (double) this.knee / this.inFlight);
		}
		this.lastNanos = now;
	}

	/**
	 * A call in flight.
	 * @param doneAt the virtual time at which it has received all its work
	 */
	record Call(double doneAt) {
	}

}
